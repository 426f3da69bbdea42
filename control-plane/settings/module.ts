// The caller's profile (with address confirmation) and their organization's settings.
import { defineModule } from '../module.ts';
import { EmailVerificationSchema } from './email-verification.entity.ts';
import { settingsRoutes } from './routes.ts';
import { createSettingsService } from './service.ts';

export const settingsModule = defineModule({
  name: 'settings',
  entities: [EmailVerificationSchema],
  routes: ({ mail }) => settingsRoutes(createSettingsService(mail)),
});
