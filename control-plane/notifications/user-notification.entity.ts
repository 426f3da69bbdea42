import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

/** What a notification is about; each kind has its own payload (below). Later areas add kinds here. */
export const USER_NOTIFICATION_KINDS = ['template.updated', 'credits.low', 'credits.exhausted', 'credits.stopped'] as const;
export type UserNotificationKind = (typeof USER_NOTIFICATION_KINDS)[number];

/** `template.updated`: a template the user follows has a new version, and what changed from the one before. */
export interface TemplateUpdatedPayload {
  templateId: string;
  templateName: string;
  version: number;
  previousVersion: number;
  changes: Array<{ field: string; from: unknown; to: unknown }>;
}

/**
 * The organization's credits (to its owners and admins): `credits.low` when the balance falls to a threshold
 * (a percentage of the last top-up), `credits.exhausted` at zero (deployments keep running until `graceEndsAt`),
 * `credits.stopped` when the grace period ended and Kiln stopped its deployments.
 */
export interface CreditsPayload {
  message: string;
  balanceCents: number;
  lastTopUpCents: number;
  thresholdPercent?: number;
  graceEndsAt?: string;
  stoppedDeployments?: number;
}

export interface UserNotificationPayloads {
  'template.updated': TemplateUpdatedPayload;
  'credits.low': CreditsPayload;
  'credits.exhausted': CreditsPayload;
  'credits.stopped': CreditsPayload;
}

/**
 * A notification addressed to one user in one organization (unlike the platform notifications
 * administrators publish to everyone, notification.entity.ts). Unread until readAt is set.
 */
export const UserNotificationSchema = defineEntity({
  name: 'UserNotification',
  extends: BaseSchema,
  // A user's list walks (user, organization, created_at, id) newest first.
  indexes: [{ properties: ['user', 'organization', 'createdAt', 'id'] }],
  properties: {
    user: () => p.manyToOne(UserSchema).ref(),
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    kind: p.string().$type<UserNotificationKind>(),
    payload: p.json<UserNotificationPayloads[UserNotificationKind]>(),
    readAt: p.datetime(3).nullable(),
  },
});

export type UserNotification = InferEntity<typeof UserNotificationSchema>;
