// The bodies Kiln's webhooks carry: an envelope (event, timestamp, data) around a deployment's or an alert's
// facts. The code that records an event builds its payload to these types, and docs/reference/events.md is
// generated from these schemas (npm run docs:reference).
import { z } from 'zod';

const envelope = <Data extends z.ZodObject>(title: string, data: Data) => z.object({
  event: z.string().describe('The event type, as subscribed to (deployment.running, alert.firing, ...).'),
  timestamp: z.iso.datetime().describe('When Kiln recorded the event (ISO 8601, UTC).'),
  data,
}).meta({ title });

export const DeploymentWebhookPayload = envelope('Deployment payload', z.object({
  id: z.string().describe('The deployment\'s id (dep_...).'),
  name: z.string().describe('The deployment\'s name.'),
  status: z.string().describe('Its status after the change: pending, running, scaled_to_zero, stopped, failed or deleted.'),
  endpoint: z.string().describe('The URL its model is served at.'),
  gpu: z.string().describe('Its GPU type (nvidia-l4, ...).'),
  replicas: z.number().int().describe('The replicas it runs after the change (0 when not running).'),
  previousReplicas: z.number().int().optional().describe('deployment.scaled: the replicas it ran before.'),
  reason: z.string().optional().describe('Why: a failure\'s reason, a forced deletion\'s, the autoscaler\'s for a scale, or the nodes lost for a recovery.'),
}).describe('The deployment, as the event left it.'));
export type DeploymentWebhookPayload = z.infer<typeof DeploymentWebhookPayload>;

export const AlertWebhookPayload = envelope('Alert payload', z.object({
  id: z.string().describe('The alert\'s id.'),
  ruleId: z.string().nullable().describe('The rule that fired it; null for an alert raised by hand.'),
  name: z.string().describe('The rule\'s name, or the name it was raised with.'),
  metric: z.string().describe('What the rule watches (latency, error_rate, queue, spend, ...); manual for an alert raised by hand.'),
  message: z.string().describe('What happened, in words.'),
  state: z.enum(['firing', 'resolved']).describe('firing for alert.firing, resolved for alert.resolved.'),
  value: z.number().nullable().describe('The value the rule measured; null when none was measured.'),
  threshold: z.number().nullable().describe('The rule\'s threshold; null for yes-or-no metrics and alerts raised by hand.'),
  firedAt: z.iso.datetime().describe('When the alert fired.'),
  resolvedAt: z.iso.datetime().nullable().describe('When it was resolved; null while it fires.'),
}).describe('The alert, as the event left it.'));
export type AlertWebhookPayload = z.infer<typeof AlertWebhookPayload>;
