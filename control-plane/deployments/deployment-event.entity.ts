import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

/**
 * A lifecycle event of a deployment (`deployment.running`, ...), written by the workflow's status activity
 * in the same transaction as the status. Unique per (deployment, type, generation): a retried activity
 * cannot emit an edge's event twice. Webhook delivery reads from here.
 */
export const DeploymentEventSchema = defineEntity({
  name: 'DeploymentEvent',
  extends: BaseSchema,
  uniques: [{ properties: ['deploymentId', 'type', 'generation'] }],
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    deploymentId: p.string(),
    organizationId: p.string(),
    type: p.string(),
    generation: p.integer(),
    /** The webhook payload of the spec (event, timestamp, data). */
    payload: p.json<Record<string, unknown>>(),
  },
});

export type DeploymentEvent = InferEntity<typeof DeploymentEventSchema>;
