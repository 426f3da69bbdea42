// Deployment templates: versioned configurations to deploy from, catalog presets, stars and update subscriptions.
import { defineModule } from '../module.ts';
import { templateRoutes } from './routes.ts';
import { createTemplateService, type TemplateService } from './service.ts';

declare module '../module.ts' {
  interface Services { templates: TemplateService }
}

export const templatesModule = defineModule({
  name: 'templates',
  services: ({ cursors, services }) => ({
    templates: createTemplateService({ cursors, deployments: services.deployments, userNotifications: services.userNotifications }),
  }),
  routes: ({ services }) => templateRoutes(services.templates),
});
