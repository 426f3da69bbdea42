import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

/**
 * A capacity decision about a `local` cluster's node pools (`cluster.pool_grown` for a deployment,
 * `cluster.pool_shrunk` after idle time), written in the transaction that commits the pool's new size. Unique per
 * (cluster, request): a retried decision records it once. Platform administrators read them
 * (GET /v1/admin/clusters/{id}/events); webhook delivery reads the payload from here.
 */
export const ClusterEventSchema = defineEntity({
  name: 'ClusterEvent',
  extends: BaseSchema,
  uniques: [{ properties: ['clusterId', 'requestId'] }],
  indexes: [{ properties: ['clusterId', 'createdAt'] }],
  properties: {
    clusterId: p.string(),
    type: p.string(),
    /** The decision's request id (a workflow run's, numbered): its retries find it recorded. */
    requestId: p.string(),
    /** The deployment a growth was for; null for a shrink. */
    deploymentId: p.string().nullable(),
    /** The webhook payload (event, timestamp, data). */
    payload: p.json<Record<string, unknown>>(),
  },
});

export type ClusterEvent = InferEntity<typeof ClusterEventSchema>;
