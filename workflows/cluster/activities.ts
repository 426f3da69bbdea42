// The cluster workflow's activities: `pulumi up` and `destroy` of an `aws` cluster's gpu-cluster stack, and
// status writes. The kubeconfig the stack outputs goes straight to the store (sealed), never into workflow
// history.
import { ApplicationFailure } from '@temporalio/activity';
import type { ClusterLifecycleStatus, DesiredCluster } from '../contract/cluster.ts';
import { EMPTY_PROGRAM, refuseInvalid, runActivityOperation } from '../pulumi/activity.ts';
import type { ProgramRef, PulumiSettings } from '../pulumi/automation.ts';

export interface ClusterTarget {
  readonly clusterId: string;
  readonly name: string;
  readonly desired: DesiredCluster;
}

export interface ClusterStatusUpdate {
  readonly clusterId: string;
  readonly status: ClusterLifecycleStatus;
  readonly failureReason?: string;
}

/** What a provisioned cluster offers and how to reach it. */
export interface ClusterOutputs {
  readonly kubeconfig: string;
  readonly gpus: readonly { gpuType: string; count: number }[];
}

export interface ClusterActivityDeps {
  readonly pulumi: PulumiSettings;
  /** The gpu-cluster program of a target, named by module and export (it runs in a process of its own). */
  readonly programFor: (target: ClusterTarget) => ProgramRef;
  /** Checks a target against the stack's rules before Pulumi runs; what it throws is not worth a retry. */
  readonly check: (target: ClusterTarget) => void;
  /** GPUs one machine of a node group's GPU type has. */
  readonly gpusPerNode: (gpuType: string) => number;
  readonly store: {
    record(update: ClusterStatusUpdate): Promise<void>;
    recordOutputs(clusterId: string, outputs: ClusterOutputs): Promise<void>;
  };
}

export const CLUSTER_PROJECT = 'kiln-gpu-cluster';

export function createClusterActivities(deps: ClusterActivityDeps) {
  return {
    async recordClusterStatus(update: ClusterStatusUpdate): Promise<void> {
      await deps.store.record(update);
    },

    /** `pulumi up` of the cluster's stack; records its kubeconfig and the GPUs its node groups offer; answers the drift it put back. */
    async applyClusterStack(target: ClusterTarget): Promise<{ drift: string[] }> {
      refuseInvalid(() => deps.check(target), 'InvalidCluster');
      const { outputs, drift } = await runActivityOperation(deps.pulumi, {
        project: CLUSTER_PROJECT,
        stackName: target.clusterId,
        config: { 'aws:region': { value: target.desired.region } },
        ...deps.programFor(target),
      }, 'up');
      const kubeconfig = outputs.kubeconfig?.value;
      if (typeof kubeconfig !== 'string') throw ApplicationFailure.nonRetryable('the cluster stack did not output a kubeconfig', 'StackOutputMissing');
      const gpus = target.desired.nodeGroups
        .map((g) => ({ gpuType: g.gpuType, count: g.desiredSize * deps.gpusPerNode(g.gpuType) }))
        .filter((g) => g.count > 0);
      await deps.store.recordOutputs(target.clusterId, { kubeconfig, gpus });
      return { drift };
    },

    /** `pulumi destroy` and removal of the cluster's stack. */
    async destroyClusterStack(target: { clusterId: string }): Promise<void> {
      await runActivityOperation(deps.pulumi, { project: CLUSTER_PROJECT, stackName: target.clusterId, ...EMPTY_PROGRAM }, 'destroy');
    },
  };
}

export type ClusterActivities = ReturnType<typeof createClusterActivities>;
