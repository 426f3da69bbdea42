// One workflow per `aws` or `local` GPU cluster (workflow id = cluster id). It provisions the cluster's stack
// (gpu-cluster, or the local cluster's node pools), then lives on to scale it (new node group or pool sizes) or
// delete it, converging on the newest desired state it was sent. Every status edge is written by an activity.
// Deterministic: no I/O here.
import {
  ActivityFailure, ApplicationFailure, condition, continueAsNew, proxyActivities, setHandler, workflowInfo,
} from '@temporalio/workflow';
import {
  clusterProgressQuery, desiredClusterSignal, type ClusterLifecycleStatus, type ClusterProgress, type ClusterWorkflowInput,
} from '../contract/cluster.ts';
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

export async function clusterWorkflow(input: ClusterWorkflowInput): Promise<ClusterProgress> {
  const { clusterId, name } = input;
  let desired = input.desired;
  let appliedGeneration = input.resume?.appliedGeneration ?? 0;
  let progress: ClusterProgress = input.resume?.progress ?? { status: 'provisioning', observedGeneration: 0 };

  setHandler(desiredClusterSignal, (next) => {
    if (next.generation > desired.generation) desired = next; // older or repeated messages change nothing
  });
  setHandler(clusterProgressQuery, () => progress);

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
    // Sleep until an administrator asks for something new.
    await condition(() => desired.generation > progress.observedGeneration);
    if (workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof clusterWorkflow>({ ...input, desired, resume: { appliedGeneration, progress } });
    }
  }
}

function failureReason(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) return cause.message;
  return cause instanceof Error ? cause.message : String(cause);
}
