import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

/** What a notification is about; each kind has its own payload (below). Later areas add kinds here. */
export const USER_NOTIFICATION_KINDS = [
  'template.updated', 'credits.low', 'credits.exhausted', 'credits.stopped',
  'deployment.failed', 'deployment.running', 'alert.fired', 'alert.resolved', 'invoice.issued',
] as const;
export type UserNotificationKind = (typeof USER_NOTIFICATION_KINDS)[number];

/** The kinds a user's list shows: their own notifications' and the platform announcements (notification.entity.ts). */
export const NOTIFICATION_KINDS = [...USER_NOTIFICATION_KINDS, 'platform.announcement'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

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

/** `deployment.failed` / `deployment.running`: a deployment reached that status (the status store's edge). */
export interface DeploymentStatusPayload {
  message: string;
  deploymentId: string;
  deploymentName: string;
  status: 'failed' | 'running';
  reason?: string | null;
}

/** `alert.fired` / `alert.resolved`: one of the organization's alerts fired or resolved. */
export interface AlertPayload {
  message: string;
  alertId: string;
  name: string;
  metric: string;
  value?: number | null;
  threshold?: number | null;
}

/**
 * `invoice.issued`: the month's invoice (to owners and admins, who hold billing:read). `sequence` is the
 * organization's invoice count; the list answers the printed number beside it (invoices/service.ts invoiceNumber).
 */
export interface InvoicePayload {
  message: string;
  invoiceId: string;
  sequence: number;
  totalCents: number;
  currency: string;
  periodStart: string;
  periodEnd: string;
}

export interface UserNotificationPayloads {
  'template.updated': TemplateUpdatedPayload;
  'credits.low': CreditsPayload;
  'credits.exhausted': CreditsPayload;
  'credits.stopped': CreditsPayload;
  'deployment.failed': DeploymentStatusPayload;
  'deployment.running': DeploymentStatusPayload;
  'alert.fired': AlertPayload;
  'alert.resolved': AlertPayload;
  'invoice.issued': InvoicePayload;
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
