import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import type { UserNotificationKind, UserNotificationPayloads } from './user-notification.entity.ts';

/** A send that failed this many times is given up (its last error kept). */
export const MAIL_ATTEMPTS = 5;

/**
 * One e-mail copy of a notification, owed to a user who asked for its kind by e-mail: the outbox both the API
 * and the worker write to in the transaction of what it tells of, and every API replica's mail-outbox.ts
 * sends from (the worker has no mailer). Apart from the in-app row, so e-mail and the app are chosen apart.
 */
export const NotificationMailSchema = defineEntity({
  name: 'NotificationMail',
  extends: BaseSchema,
  properties: {
    user: () => p.manyToOne(UserSchema).ref(),
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    kind: p.string().$type<UserNotificationKind>(),
    payload: p.json<UserNotificationPayloads[UserNotificationKind]>(),
    sentAt: p.datetime(3).nullable(),
    attempts: p.integer().default(0),
    lastError: p.text().nullable(),
  },
});

export type NotificationMail = InferEntity<typeof NotificationMailSchema>;
