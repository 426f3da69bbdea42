// Delivery of desired states to cluster workflows, as deployments' (core/workflow-outbox.ts): the API saves a
// change of an `aws` or `local` cluster, then sends it; one Temporal could not take stays saved with
// `generation > sentGeneration` and is sent again by the loop clusters/module.ts runs.
import { raw } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { workflowOutbox, type WorkflowOutbox } from '../core/workflow-outbox.ts';
import { GpuClusterSchema, type GpuClusterRecord } from './gpu-cluster.entity.ts';
import type { ClusterOrchestrator } from './orchestrator.ts';

export interface ClusterDeliveryDeps {
  orchestrator: Pick<ClusterOrchestrator, 'converge'>;
  log: Pick<Logger, 'error' | 'info'>;
}

export function clusterDelivery(deps: ClusterDeliveryDeps): WorkflowOutbox<GpuClusterRecord> {
  return workflowOutbox<GpuClusterRecord>({
    kind: 'cluster',
    log: deps.log,
    deliver: (cluster, deadlineMs) => deps.orchestrator.converge(cluster, deadlineMs),
    // A newer generation sent concurrently is never rolled back.
    markSent: async (em, cluster) => {
      await em.nativeUpdate(GpuClusterSchema, { id: cluster.id, sentGeneration: { $lt: cluster.generation } }, { sentGeneration: cluster.generation });
    },
    unsent: (em, savedBefore, limit) => em.find(GpuClusterSchema, {
      provider: { $in: ['aws', 'local'] },
      deletedAt: null,
      updatedAt: { $lt: savedBefore },
      [raw((alias) => `${alias}.generation > ${alias}.sent_generation`)]: [],
    }, { orderBy: { updatedAt: 'asc', id: 'asc' }, limit }),
  });
}
