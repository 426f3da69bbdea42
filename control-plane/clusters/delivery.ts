// Delivery of desired states to cluster workflows, as deployments/desired-state-delivery.ts does for
// deployments. The API saves a change of an `aws` or `local` cluster, then sends it; when Temporal cannot be
// reached (or the monitor says it is away) the change stays saved with `generation > sentGeneration`, and the
// redelivery loop sends it once Temporal answers. Sending twice is harmless: the workflow ignores generations it has seen.
import { raw, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { createPeriodic, type Periodic } from '../../lib/periodic.ts';
import { BACKGROUND_DEADLINE_MS } from '../core/workflow-calls.ts';
import { GpuClusterSchema, type GpuClusterRecord } from './gpu-cluster.entity.ts';
import type { ClusterOrchestrator } from './orchestrator.ts';

export interface ClusterDeliveryDeps {
  orchestrator: Pick<ClusterOrchestrator, 'converge'>;
  log: Pick<Logger, 'error' | 'info'>;
}

/** Sends the cluster's committed desired state; true when its workflow has it. Never throws. `deadlineMs`: a request's when absent. */
export async function sendClusterState(em: EntityManager, deps: ClusterDeliveryDeps, cluster: GpuClusterRecord, deadlineMs?: number): Promise<boolean> {
  try {
    await deps.orchestrator.converge(cluster, deadlineMs);
  } catch (error) {
    deps.log.error({ err: error, clusterId: cluster.id }, 'could not reach the cluster workflow; the change is saved and will be sent again');
    return false;
  }
  // A newer generation sent concurrently is never rolled back.
  await em.nativeUpdate(GpuClusterSchema, { id: cluster.id, sentGeneration: { $lt: cluster.generation } }, { sentGeneration: cluster.generation });
  return true;
}

/** One pass: sends every saved cluster change its workflow has not received; answers how many were delivered. */
export async function redeliverClusterStates(orm: MikroORM, deps: ClusterDeliveryDeps, options: { graceMs?: number } = {}): Promise<number> {
  const em = orm.em.fork();
  const unsent = await em.find(GpuClusterSchema, {
    provider: { $in: ['aws', 'local'] },
    deletedAt: null,
    updatedAt: { $lt: new Date(Date.now() - (options.graceMs ?? 5_000)) },
    [raw((alias) => `${alias}.generation > ${alias}.sent_generation`)]: [],
  }, { orderBy: { updatedAt: 'asc', id: 'asc' }, limit: 100 });
  let delivered = 0;
  for (const cluster of unsent) {
    if (!(await sendClusterState(em, deps, cluster, BACKGROUND_DEADLINE_MS))) break; // Temporal is still away: next pass.
    delivered += 1;
  }
  return delivered;
}

/** Redelivery passes every `intervalMs` once started, until stopped (each API replica runs one, from clusters/module.ts; overlaps are harmless). */
export function createClusterRedelivery(deps: ClusterDeliveryDeps & { orm: MikroORM; intervalMs?: number }): Periodic {
  return createPeriodic(async () => {
    const delivered = await redeliverClusterStates(deps.orm, deps);
    if (delivered) deps.log.info({ delivered }, 'sent saved cluster changes to their workflows');
  }, { intervalMs: deps.intervalMs ?? 10_000, onError: (error) => deps.log.error({ err: error }, 'cluster redelivery pass failed') });
}
