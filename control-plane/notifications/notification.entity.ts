import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** An announcement platform administrators publish to users (a maintenance window, an incident). */
export const NotificationSchema = defineEntity({
  name: 'Notification',
  extends: BaseSchema,
  // The admin list walks (created_at, id) newest first.
  indexes: [{ properties: ['createdAt', 'id'] }],
  properties: {
    title: p.string(),
    message: p.text(),
    severity: p.string().$type<Severity>(),
    /** Organizations that see it; null: every organization. */
    organizationIds: p.json<string[]>().nullable(),
    startsAt: p.datetime(3).nullable(),
    endsAt: p.datetime(3).nullable(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type Notification = InferEntity<typeof NotificationSchema>;
