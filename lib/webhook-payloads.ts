// The bodies Kiln's webhooks carry: an envelope (event, timestamp, data) around a deployment's, an alert's or a
// GPU cluster's facts. The code that records an event builds its payload to these types, and docs/reference/events.md is
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
  reason: z.string().optional().describe('Why: a failure\'s reason, a forced deletion\'s, the autoscaler\'s for a scale, the nodes lost for a recovery, or the nodes being added for deployment.capacity_requested.'),
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

export const ClusterWebhookPayload = envelope('Cluster payload', z.object({
  id: z.string().describe('The cluster\'s id (clu_...).'),
  name: z.string().describe('The cluster\'s name.'),
  pool: z.string().describe('The node pool whose size changed.'),
  gpuType: z.string().describe('The pool\'s GPU type (nvidia-l4, ...).'),
  previousSize: z.number().int().describe('The pool\'s desired nodes before the decision.'),
  size: z.number().int().describe('Its desired nodes after it (the cluster\'s workflow then adds or removes the nodes).'),
  nodes: z.array(z.string()).describe('The nodes added (cluster.pool_grown) or removed (cluster.pool_shrunk), by name.'),
  deploymentId: z.string().nullable().describe('cluster.pool_grown: the deployment whose replicas could not be placed; null for cluster.pool_shrunk.'),
  reason: z.string().describe('The decision, in words (adding 2 nvidia-l4 nodes to pool l4, removing 1 idle nvidia-l4 node from pool l4 (l4-2), 2 left).'),
}).describe('The pool, as the decision left it.'));
export type ClusterWebhookPayload = z.infer<typeof ClusterWebhookPayload>;
