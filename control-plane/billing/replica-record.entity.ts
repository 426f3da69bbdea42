import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

/**
 * A deployment's billable replicas from `observedAt` until its next record: written by the workflow's status
 * store on every lifecycle edge, at the time the workflow saw the edge (so a write that arrives late still
 * lands in the interval it belongs to). Replicas are 0 in statuses that cost nothing (catalog/billing.ts).
 * Unique per (deployment, observedAt): a retried write changes nothing.
 */
export const ReplicaRecordSchema = defineEntity({
  name: 'ReplicaRecord',
  extends: BaseSchema,
  uniques: [{ properties: ['deploymentId', 'observedAt'] }],
  indexes: [{ properties: ['organizationId', 'observedAt'] }],
  properties: {
    organizationId: p.string(),
    deploymentId: p.string(),
    status: p.string(),
    replicas: p.integer(),
    gpu: p.string(),
    gpusPerReplica: p.integer(),
    observedAt: p.datetime(3),
  },
});

export type ReplicaRecord = InferEntity<typeof ReplicaRecordSchema>;
