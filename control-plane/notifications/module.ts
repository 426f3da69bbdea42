// Platform notifications, written by administrators, and notifications addressed to one user (what they
// follow: template updates; and what the worker tells them: deployments, alerts, credits, invoices), which
// /v1/notifications lists together with the live announcements, with the user's reads and preferences; and the
// outbox that e-mails the kinds users asked for by e-mail (mail-outbox.ts), which the module runs.
import type { Periodic } from '../../lib/periodic.ts';
import { defineModule } from '../module.ts';
import { createInboxService } from './inbox.ts';
import { createMailOutbox } from './mail-outbox.ts';
import { inboxRoutes } from './routes.ts';
import { createNotificationService, type NotificationService } from './service.ts';
import { createUserNotificationService, type UserNotificationService } from './user-notifications.ts';

declare module '../module.ts' {
  interface Services {
    notifications: NotificationService;
    userNotifications: UserNotificationService;
    /** Sends the notification e-mails owed, the worker's included (every API replica runs one). */
    mailOutbox: Periodic;
  }
}

export const notificationsModule = defineModule({
  name: 'notifications',
  services: ({ cursors, orm, mail, log }) => ({
    notifications: createNotificationService({ cursors }), userNotifications: createUserNotificationService(),
    mailOutbox: createMailOutbox({ orm, mailer: mail.mailer, log }),
  }),
  routes: ({ cursors }) => inboxRoutes(createInboxService({ cursors })),
  start: ({ services }) => services.mailOutbox.start(),
  close: ({ mailOutbox }) => mailOutbox.stop(),
});
