import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

/**
 * A lifecycle event of a deployment (`deployment.running`, ...), written by the workflow's status activity
 * in the same transaction as the status. Unique per (deployment, type, generation, sequence): a retried
 * activity cannot emit an edge's event twice, while each of the autoscaler's scales within one generation
 * (sequence) is an event of its own. Webhook delivery reads from here.
 */
export const DeploymentEventSchema = defineEntity({
  name: 'DeploymentEvent',
  extends: BaseSchema,
  uniques: [{ properties: ['deploymentId', 'type', 'generation', 'sequence'] }],
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    deploymentId: p.string(),
    organizationId: p.string(),
    type: p.string(),
    generation: p.integer(),
    /** The workflow's count of scales, for `deployment.scaled`; 0 for other events. */
    sequence: p.integer().default(0),
    /** The webhook payload of the spec (event, timestamp, data). */
    payload: p.json<Record<string, unknown>>(),
  },
});

export type DeploymentEvent = InferEntity<typeof DeploymentEventSchema>;
