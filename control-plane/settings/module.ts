// The caller's profile (with address confirmation) and their organization's settings.
import { defineModule } from '../module.ts';
import { settingsRoutes } from './routes.ts';
import { createSettingsService } from './service.ts';

export const settingsModule = defineModule({
  name: 'settings',
  routes: ({ mail }) => settingsRoutes(createSettingsService(mail)),
});
