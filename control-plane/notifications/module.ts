// Platform notifications, written by administrators, and notifications addressed to one user (what they
// follow: template updates; and what the worker tells them: deployments, alerts, credits, invoices), which
// /v1/notifications lists together with the live announcements, with the user's reads and preferences.
import { defineModule } from '../module.ts';
import { createInboxService } from './inbox.ts';
import { inboxRoutes } from './routes.ts';
import { createNotificationService, type NotificationService } from './service.ts';
import { createUserNotificationService, type UserNotificationService } from './user-notifications.ts';

declare module '../module.ts' {
  interface Services { notifications: NotificationService; userNotifications: UserNotificationService }
}

export const notificationsModule = defineModule({
  name: 'notifications',
  services: ({ cursors }) => ({
    notifications: createNotificationService({ cursors }), userNotifications: createUserNotificationService(),
  }),
  routes: ({ cursors }) => inboxRoutes(createInboxService({ cursors })),
});
