import { z } from 'zod';
import { SEVERITIES } from './notification.entity.ts';
import { ORGANIZATION_ID_PATTERN } from '../../lib/ids.ts';
import { orgIdQuery } from '../core/organization-query.ts';
import { pageQuery } from '../core/pagination.ts';
import { NOTIFICATION_KINDS, type NotificationKind } from './user-notification.entity.ts';

const instant = z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601 timestamp.' });
const title = z.string().trim().min(1).max(200);
const message = z.string().trim().min(1).max(5000);
const organizationId = z.string().regex(ORGANIZATION_ID_PATTERN, 'must be an organization id');
const audience = z.strictObject({
  organizationIds: z.array(organizationId).min(1).max(1000)
    .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an id')
    .optional().meta({ description: 'Organizations that see the notification; absent: every organization.' }),
}).meta({ description: 'Who sees the notification; absent (or without organizationIds): everyone.' });
const endsAfterStarts = { message: 'must be after startsAt', path: ['endsAt'] };

export const CreateNotificationRequest = z.strictObject({
  title,
  message,
  severity: z.enum(SEVERITIES),
  audience: audience.optional(),
  startsAt: instant.optional().meta({ description: 'When it starts to show; absent: at once.' }),
  endsAt: instant.optional().meta({ description: 'When it stops showing (after startsAt); absent: until deleted.' }),
}).refine((n) => !n.startsAt || !n.endsAt || new Date(n.startsAt) < new Date(n.endsAt), endsAfterStarts)
  .meta({ id: 'CreateNotificationRequest' });

export const UpdateNotificationRequest = z.strictObject({
  title: title.optional(),
  message: message.optional(),
  severity: z.enum(SEVERITIES).optional(),
  audience: audience.nullable().optional().meta({ description: 'Replaces the audience; null: everyone.' }),
  startsAt: instant.nullable().optional().meta({ description: 'null: at once.' }),
  endsAt: instant.nullable().optional().meta({ description: 'null: until deleted. Must stay after startsAt (given or stored).' }),
}).meta({ id: 'UpdateNotificationRequest' });

export const NotificationIdParams = z.object({ id: z.string().max(64) });

export const ListNotificationsQuery = z.object({
  ...pageQuery,
});

export const NotificationView = z.object({
  id: z.string().meta({ example: 'ntf_0123456789abcdefghij' }),
  title: z.string(),
  message: z.string(),
  severity: z.enum(SEVERITIES),
  audience: z.object({ organizationIds: z.array(z.string()) }).nullable().meta({ description: 'null: everyone.' }),
  startsAt: z.iso.datetime().nullable(),
  endsAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
}).meta({ id: 'Notification' });

export const DeletedNotification = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'DeletedNotification' });

export type CreateNotificationInput = z.output<typeof CreateNotificationRequest>;
export type UpdateNotificationInput = z.output<typeof UpdateNotificationRequest>;
export type ListNotificationsInput = z.output<typeof ListNotificationsQuery>;
export type NotificationViewBody = z.infer<typeof NotificationView>;

// A user's own notifications (/v1/notifications): their user notifications and the live platform announcements.

export const ListMyNotificationsQuery = z.object({
  ...orgIdQuery,
  ...pageQuery,
  unread: z.enum(['true', 'false']).transform((v) => v === 'true').optional()
    .meta({ description: 'true: unread only; false: read only; absent: both.' }),
  kind: z.enum(NOTIFICATION_KINDS).optional().meta({ description: 'Only notifications of this kind.' }),
});

export const MyNotificationView = z.object({
  id: z.string().meta({ example: 'unt_0123456789abcdefghij' }),
  kind: z.enum(NOTIFICATION_KINDS),
  title: z.string(),
  message: z.string(),
  severity: z.enum(SEVERITIES),
  data: z.record(z.string(), z.unknown()).meta({ description: 'The kind\'s payload (for platform.announcement: empty).' }),
  createdAt: z.iso.datetime(),
  readAt: z.iso.datetime().nullable().meta({ description: 'null: unread.' }),
}).meta({ id: 'UserNotification' });

export const MarkedAllRead = z.object({ marked: z.number().int().meta({ description: 'How many were unread and are now read.' }) })
  .meta({ id: 'MarkedAllRead' });

// One optional boolean per kind (an object with explicit keys: the OpenAPI generator cannot draw a record keyed by an enum).
const kindSwitches = (description: string) => z.strictObject(
  Object.fromEntries(NOTIFICATION_KINDS.map((kind) => [kind, z.boolean().optional()])) as Record<NotificationKind, z.ZodOptional<z.ZodBoolean>>,
).meta({ description });

export const NotificationPreferencesRequest = z.strictObject({
  inApp: kindSwitches('Kinds to show in the app (true) or not to create (false); absent kinds keep their setting.').optional(),
  email: kindSwitches('Kinds to also send by e-mail (the API mails what it writes itself, template updates; the worker\'s kinds are in-app only); absent kinds keep their setting.').optional(),
}).meta({ id: 'NotificationPreferencesRequest' });

const resolvedSwitches = (description: string) => z.object(
  Object.fromEntries(NOTIFICATION_KINDS.map((kind) => [kind, z.boolean()])) as Record<NotificationKind, z.ZodBoolean>,
).meta({ description });

export const NotificationPreferencesView = z.object({
  inApp: resolvedSwitches('Every kind: whether it is shown in the app (default true).'),
  email: resolvedSwitches('Every kind: whether it is sent by e-mail (default false).'),
  updatedAt: z.iso.datetime().nullable().meta({ description: 'null: never set (the defaults).' }),
}).meta({ id: 'NotificationPreferences' });

export type ListMyNotificationsInput = z.output<typeof ListMyNotificationsQuery>;
export type MyNotificationViewBody = z.infer<typeof MyNotificationView>;
export type NotificationPreferencesInput = z.output<typeof NotificationPreferencesRequest>;
export type NotificationPreferencesBody = z.infer<typeof NotificationPreferencesView>;
