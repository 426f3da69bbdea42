import { z } from 'zod';
import { SEVERITIES } from './notification.entity.ts';
import { ORGANIZATION_ID_PATTERN } from '../../lib/ids.ts';
import { pageQuery } from '../core/pagination.ts';

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
