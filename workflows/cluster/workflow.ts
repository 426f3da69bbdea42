// One workflow per `aws` or `local` GPU cluster (workflow id = cluster id). It provisions the cluster's stack
// (gpu-cluster, or the local cluster's node pools), then lives on to scale it (new node group or pool sizes) or
// delete it, converging on the newest desired state it was sent. Every status edge is written by an activity. While
// a `local` cluster is ready and nothing new is asked, it watches its pools' nodes (readPoolUse) and shrinks a pool
// whose top nodes ran no Kiln replica for the idle time (shrinkNodePool drains them and commits the smaller size,
// whose applyClusterStack removes them). Deterministic: no I/O here.
import {
  ActivityFailure, ApplicationFailure, condition, continueAsNew, patched, proxyActivities, setHandler, workflowInfo,
} from '@temporalio/workflow';
import {
  clusterProgressQuery, desiredClusterSignal, type ClusterLifecycleStatus, type ClusterProgress, type ClusterWorkflowInput,
} from '../contract/cluster.ts';
import { planPoolShrink } from '../../catalog/node-pools.ts';
import type { ClusterActivities } from './activities.ts';

const { recordClusterStatus } = proxyActivities<ClusterActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});
// An EKS cluster and its node groups take a quarter of an hour or more to create (a local pool's nodes, seconds).
const { applyClusterStack, destroyClusterStack } = proxyActivities<ClusterActivities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 4 },
});

// Quick reads and writes; a read that fails is skipped until the next check.
const { readPoolUse } = proxyActivities<ClusterActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 2 },
});
// Drains nodes and commits the pool's size: safe to retry (its request id).
const { shrinkNodePool } = proxyActivities<ClusterActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

export async function clusterWorkflow(input: ClusterWorkflowInput): Promise<ClusterProgress> {
  const { clusterId, name } = input;
  let desired = input.desired;
  let appliedGeneration = input.resume?.appliedGeneration ?? 0;
  let progress: ClusterProgress = input.resume?.progress ?? { status: 'provisioning', observedGeneration: 0 };

  setHandler(desiredClusterSignal, (next) => {
    if (next.generation > desired.generation) desired = next; // older or repeated messages change nothing
  });
  setHandler(clusterProgressQuery, () => progress);
  // Since when each node of a local cluster's pools has run no Kiln replica; the shrinks this run asked for.
  let idleSince: Record<string, number> = { ...input.resume?.idleSince };
  let shrinks = 0;
  const changeAsked = () => desired.generation > progress.observedGeneration;

  /**
   * Until something new is asked, or a pool was shrunk (its new size then applied): reads which nodes run a Kiln
   * replica every check interval, and offers the nodes idle for the idle time to shrinkNodePool.
   */
  const watchIdleNodes = async () => {
    let intervalMs = 60_000;
    while (!workflowInfo().continueAsNewSuggested) {
      const use = await readPoolUse({ clusterId }).catch(() => undefined);
      if (use) {
        intervalMs = use.checkIntervalMs;
        const now = Date.now();
        const next: Record<string, number> = {};
        for (const node of use.nodes) if (!node.busy) next[node.name] = idleSince[node.name] ?? now;
        idleSince = next;
        const idleNodes = Object.keys(idleSince).filter((name) => now - idleSince[name]! >= use.idleAfterMs).sort();
        // Only when a pool's top nodes are among them (the activity plans again, against the committed sizes).
        if (desired.provider === 'local' && planPoolShrink(desired.nodePools, new Set(idleNodes)).pool !== undefined && !changeAsked()) {
          shrinks += 1;
          const result = await shrinkNodePool({ clusterId, requestId: `${workflowInfo().runId}/${shrinks}`, idleNodes }).catch(() => undefined);
          if (result?.shrunk) {
            for (const name of result.nodes) delete idleSince[name];
            if (result.desired.generation > desired.generation) desired = result.desired;
            return;
          }
        }
      }
      if (await condition(changeAsked, intervalMs)) return;
    }
  };

  const edge = async (status: ClusterLifecycleStatus, generation: number, failureReason?: string) => {
    progress = { status, observedGeneration: generation, failureReason };
    await recordClusterStatus({ clusterId, status, failureReason });
  };

  for (;;) {
    const target = desired;
    if (target.deleted) {
      await edge('deleting', target.generation);
      try {
        await destroyClusterStack({ clusterId, provider: target.provider });
        await edge('deleted', target.generation);
        return progress;
      } catch (error) {
        await edge('failed', target.generation, `deletion failed: ${failureReason(error)}`);
      }
    } else if (appliedGeneration < target.generation) {
      await edge(appliedGeneration === 0 ? 'provisioning' : 'scaling', target.generation);
      try {
        await applyClusterStack({ clusterId, name, desired: target });
        appliedGeneration = target.generation;
        await edge('ready', target.generation);
      } catch (error) {
        await edge('failed', target.generation, failureReason(error));
      }
    }
    // Sleep until an administrator asks for something new, a pool grows, or (patched(): not in histories from
    // before pools shrank) idle nodes shrink a local cluster's pool.
    if (desired.provider === 'local' && !desired.deleted && progress.status === 'ready' && patched('pool-shrink')) await watchIdleNodes();
    else await condition(changeAsked);
    if (workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof clusterWorkflow>({ ...input, desired, resume: { appliedGeneration, progress, idleSince } });
    }
  }
}

function failureReason(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) return cause.message;
  return cause instanceof Error ? cause.message : String(cause);
}
