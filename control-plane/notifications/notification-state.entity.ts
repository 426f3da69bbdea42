import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { NotificationSchema } from './notification.entity.ts';
import type { NotificationKind } from './user-notification.entity.ts';

/**
 * That a user read a platform announcement (notification.entity.ts) in one organization: announcements are
 * shared by many users, so their read state cannot live on the announcement itself.
 */
export const NotificationReadSchema = defineEntity({
  name: 'NotificationRead',
  extends: BaseSchema,
  uniques: [{ properties: ['user', 'organization', 'notification'] }],
  properties: {
    user: () => p.manyToOne(UserSchema).ref(),
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    // Deleting an announcement takes its reads with it.
    notification: () => p.manyToOne(NotificationSchema).ref().deleteRule('cascade'),
  },
});

export type NotificationRead = InferEntity<typeof NotificationReadSchema>;

/** Per kind: true on, false off; an absent kind takes the default (in-app on, e-mail off). */
export type KindSwitches = Partial<Record<NotificationKind, boolean>>;

/** Which kinds of notification a user wants, in one organization, in the app and by e-mail. */
export const NotificationPreferenceSchema = defineEntity({
  name: 'NotificationPreference',
  extends: BaseSchema,
  uniques: [{ properties: ['user', 'organization'] }],
  properties: {
    user: () => p.manyToOne(UserSchema).ref(),
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    inApp: p.json<KindSwitches>(),
    email: p.json<KindSwitches>(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type NotificationPreference = InferEntity<typeof NotificationPreferenceSchema>;
