// The activity feed: what happened in the organization, read from the records other areas keep.
import { defineModule } from '../module.ts';
import { activityRoutes } from './routes.ts';
import { createActivityService } from './service.ts';

export const activityModule = defineModule({
  name: 'activity',
  services: ({ cursors }) => ({ activity: createActivityService({ cursors }) }),
  routes: ({ services }) => activityRoutes(services.activity),
});

declare module '../module.ts' {
  interface Services { activity: ReturnType<typeof createActivityService> }
}
