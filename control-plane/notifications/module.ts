// Platform notifications, written by administrators.
import { defineModule } from '../module.ts';
import { NotificationSchema } from './notification.entity.ts';
import { createNotificationService, type NotificationService } from './service.ts';

declare module '../module.ts' {
  interface Services { notifications: NotificationService }
}

export const notificationsModule = defineModule({
  name: 'notifications',
  entities: [NotificationSchema],
  services: ({ cursors }) => ({ notifications: createNotificationService({ cursors }) }),
});
