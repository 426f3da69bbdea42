// Platform notifications, written by administrators, and notifications addressed to one user (what they
// follow: template updates).
import { defineModule } from '../module.ts';
import { NotificationSchema } from './notification.entity.ts';
import { createNotificationService, type NotificationService } from './service.ts';
import { UserNotificationSchema } from './user-notification.entity.ts';
import { createUserNotificationService, type UserNotificationService } from './user-notifications.ts';

declare module '../module.ts' {
  interface Services { notifications: NotificationService; userNotifications: UserNotificationService }
}

export const notificationsModule = defineModule({
  name: 'notifications',
  entities: [NotificationSchema, UserNotificationSchema],
  services: ({ cursors }) => ({ notifications: createNotificationService({ cursors }), userNotifications: createUserNotificationService() }),
});
