import { z } from 'zod';
import { ALERT_EVENTS } from '../../lib/alerts/events.ts';
import { AlertWebhookPayload, ClusterWebhookPayload, DeploymentWebhookPayload } from '../../lib/webhook-payloads.ts';

/** The capacity decisions about GPU clusters' node pools: platform events, which only a platform administrator subscribes to. */
export const CLUSTER_EVENTS = ['cluster.pool_grown', 'cluster.pool_shrunk'] as const;

/**
 * Deployments' lifecycle events, alerts' firings and resolutions (the channels of /v1/monitoring/webhooks), and
 * clusters' capacity decisions.
 */
export const WEBHOOK_EVENTS = [
  'deployment.created', 'deployment.running', 'deployment.failed', 'deployment.scaled', 'deployment.recovered', 'deployment.stopped', 'deployment.deleted',
  'deployment.capacity_requested',
  ...ALERT_EVENTS,
  ...CLUSTER_EVENTS,
] as const;

/** Each event a subscription may ask for: when Kiln sends it, and the schema of its payload (docs/reference/events.md). */
export const WEBHOOK_EVENT_CATALOGUE = {
  'deployment.created': { sent: 'A deployment was created (its workflow\'s first step): status pending, no replicas.', payload: DeploymentWebhookPayload },
  'deployment.running': { sent: 'A deployment created or started came up, its pods Ready: status running, or scaled_to_zero when it runs no replicas.', payload: DeploymentWebhookPayload },
  'deployment.failed': { sent: 'A rollout or a deletion failed: status failed, with the reason.', payload: DeploymentWebhookPayload },
  'deployment.scaled': { sent: 'A running deployment\'s replicas changed, by a user or the autoscaler (each autoscaler step is its own event), with the replicas before and the autoscaler\'s reason: status running, or scaled_to_zero.', payload: DeploymentWebhookPayload },
  'deployment.recovered': { sent: 'A running deployment lost replicas with a node (deleted, or no longer Ready) and Kiln placed them again, growing a node pool if it had to: status running, with what was lost in reason.', payload: DeploymentWebhookPayload },
  'deployment.stopped': { sent: 'A deployment was stopped (by a user, a budget or credits run out): status stopped, no replicas.', payload: DeploymentWebhookPayload },
  'deployment.deleted': { sent: 'A deployment and its Kubernetes objects were deleted; a forced deletion after a failed teardown says so in reason.', payload: DeploymentWebhookPayload },
  'deployment.capacity_requested': { sent: 'A deployment\'s replicas could not be placed for lack of GPUs and Kiln is adding nodes to a node pool of its cluster for them (reason says how many, to which pool); the deployment keeps its status while it waits.', payload: DeploymentWebhookPayload },
  'alert.firing': { sent: 'An alert fired: a rule\'s condition held for its duration, or an alert was raised by hand.', payload: AlertWebhookPayload },
  'alert.resolved': { sent: 'A firing alert was resolved: its rule\'s condition stopped holding or the rule was changed or deleted, or it was resolved by hand.', payload: AlertWebhookPayload },
  'cluster.pool_grown': { sent: 'A local cluster\'s node pool was grown for a deployment whose replicas could not be placed (platform administrators only: its organization is told by deployment.capacity_requested).', payload: ClusterWebhookPayload },
  'cluster.pool_shrunk': { sent: 'Idle nodes of a local cluster\'s node pool (no Kiln replica on them for the worker\'s KILN_POOL_IDLE_SECONDS) were drained and are being removed, down to the pool\'s minimum (platform administrators only).', payload: ClusterWebhookPayload },
} satisfies Record<(typeof WEBHOOK_EVENTS)[number], { sent: string; payload: z.ZodObject }>;

export const webhookUrl = z.url({ protocol: /^https?$/ }).max(2048).meta({ example: 'https://hooks.example.com/kiln' });

export const webhookSecret = z.string().min(24).max(256)
  .refine((s) => !s.startsWith('whsec_') || /^[A-Za-z0-9+/]{32,}={0,2}$/.test(s.slice('whsec_'.length)), 'a whsec_ secret is whsec_ followed by base64 (24+ bytes)')
  .optional().meta({
    description: 'Signing secret: `whsec_` + base64 as Standard Webhooks defines, or any string of 24+ characters. Generated when absent.',
  });

export const CreateWebhookRequest = z.strictObject({
  url: webhookUrl,
  events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(WEBHOOK_EVENTS.length),
  secret: webhookSecret,
}).meta({ id: 'CreateWebhookRequest' });

export const WebhookIdParams = z.object({ id: z.string().max(64) });

export const WebhookView = z.object({
  id: z.string().meta({ example: 'whs_0123456789abcdefghij' }),
  url: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  createdAt: z.iso.datetime(),
}).meta({ id: 'WebhookSubscription' });

export const WebhookWithSecret = WebhookView.extend({
  secret: z.string().meta({ description: 'The signing secret: shown once, never again.' }),
}).meta({ id: 'WebhookSubscriptionWithSecret' });

export const DeletedWebhook = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'DeletedWebhook' });

export const WebhookAttemptView = z.object({
  id: z.string(),
  deliveryId: z.string(),
  eventId: z.string(),
  attempt: z.number().int(),
  statusCode: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number().int(),
  createdAt: z.iso.datetime(),
}).meta({ id: 'WebhookAttempt' });

export type CreateWebhookInput = z.infer<typeof CreateWebhookRequest>;
export type WebhookViewBody = z.infer<typeof WebhookView>;
