// The cluster workflow's activities: `pulumi up` and `destroy` of a cluster's stack (an `aws` cluster's
// gpu-cluster stack, a `local` cluster's node pools), status writes, and a `local` cluster's idle nodes read and
// drained (pool-shrink.ts). Kubeconfigs go between the store (sealed)
// and the Pulumi program, never into workflow history.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClusterLifecycleStatus, DesiredAwsCluster, DesiredCluster, DesiredLocalCluster } from '../contract/cluster.ts';
import { EMPTY_PROGRAM, refuseInvalid, runActivityOperation } from '../pulumi/activity.ts';
import type { ProgramRef, PulumiSettings } from '../pulumi/automation.ts';
import type { PoolShrinkRequest, PoolShrinkResult, PoolUse } from './pool-shrink.ts';

export interface ClusterTarget<Desired extends DesiredCluster = DesiredCluster> {
  readonly clusterId: string;
  readonly name: string;
  readonly desired: Desired;
}

export interface ClusterStatusUpdate {
  readonly clusterId: string;
  readonly status: ClusterLifecycleStatus;
  readonly failureReason?: string;
}

/** What a cluster offers, and how to reach it when its stack made it (an `aws` cluster's). */
export interface ClusterOutputs {
  readonly kubeconfig?: string;
  readonly gpus: readonly { gpuType: string; count: number }[];
}

export interface ClusterActivityDeps {
  readonly pulumi: PulumiSettings;
  /** The gpu-cluster program of an `aws` target, named by module and export (it runs in a process of its own). */
  readonly programFor: (target: ClusterTarget<DesiredAwsCluster>) => ProgramRef;
  /** The node-pool program of a `local` target, on the cluster its kubeconfig reaches. */
  readonly localProgramFor: (target: ClusterTarget<DesiredLocalCluster>, kubeconfig: string) => ProgramRef;
  /** Checks a target against the stack's rules before Pulumi runs; what it throws is not worth a retry. */
  readonly check: (target: ClusterTarget) => void;
  /** GPUs one machine of an `aws` node group's GPU type has. */
  readonly gpusPerNode: (gpuType: string) => number;
  /** Whether every node of a `local` cluster's pools is Ready with its GPUs, read through its kubeconfig. */
  readonly poolsReady: (kubeconfig: string, desired: DesiredLocalCluster) => Promise<boolean>;
  /** A `local` cluster's pools' use and their shrink after idle time (pool-shrink.ts); no pool shrinks when absent. */
  readonly pools?: {
    use(clusterId: string): Promise<PoolUse>;
    shrink(request: PoolShrinkRequest): Promise<PoolShrinkResult>;
  };
  /** How often poolsReady is asked; 1 s when absent. */
  readonly pollIntervalMs?: number;
  readonly store: {
    record(update: ClusterStatusUpdate): Promise<void>;
    recordOutputs(clusterId: string, outputs: ClusterOutputs): Promise<void>;
    /** The registered kubeconfig of a `local` cluster, unsealed. */
    kubeconfig(clusterId: string): Promise<string>;
  };
}

export const CLUSTER_PROJECT = 'kiln-gpu-cluster';
/** A `local` cluster's node pools: a project of their own, so no stack of one is ever read as the other's. */
export const LOCAL_CLUSTER_PROJECT = 'kiln-local-gpu-pools';

const isLocal = (target: ClusterTarget): target is ClusterTarget<DesiredLocalCluster> => target.desired.provider === 'local';

export function createClusterActivities(deps: ClusterActivityDeps) {
  async function applyAws(target: ClusterTarget<DesiredAwsCluster>): Promise<{ drift: string[] }> {
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
  }

  /** Up, then wait for kwok to make the nodes Ready: the cluster is ready only when deployments can be placed on them. */
  async function applyLocal(target: ClusterTarget<DesiredLocalCluster>): Promise<{ drift: string[] }> {
    const kubeconfig = await deps.store.kubeconfig(target.clusterId);
    const { drift } = await runActivityOperation(deps.pulumi, {
      project: LOCAL_CLUSTER_PROJECT, stackName: target.clusterId, ...deps.localProgramFor(target, kubeconfig),
    }, 'up');
    while (!await deps.poolsReady(kubeconfig, target.desired)) {
      Context.current().heartbeat('waiting for the pools\' nodes to be Ready');
      await sleep(deps.pollIntervalMs ?? 1_000, undefined, { signal: Context.current().cancellationSignal });
    }
    const gpus = new Map<string, number>();
    for (const pool of target.desired.nodePools) gpus.set(pool.gpuType, (gpus.get(pool.gpuType) ?? 0) + pool.desiredSize * pool.gpusPerNode);
    await deps.store.recordOutputs(target.clusterId, {
      gpus: [...gpus].filter(([, count]) => count > 0).sort(([a], [b]) => a.localeCompare(b)).map(([gpuType, count]) => ({ gpuType, count })),
    });
    return { drift };
  }

  return {
    async recordClusterStatus(update: ClusterStatusUpdate): Promise<void> {
      await deps.store.record(update);
    },

    /** `pulumi up` of the cluster's stack; records what it offers (and an `aws` cluster's kubeconfig); answers the drift it put back. */
    async applyClusterStack(target: ClusterTarget): Promise<{ drift: string[] }> {
      refuseInvalid(() => deps.check(target), 'InvalidCluster');
      return isLocal(target) ? applyLocal(target) : applyAws(target as ClusterTarget<DesiredAwsCluster>);
    },

    /** Which nodes of a `local` cluster's pools run a Kiln replica, and the idle time after which the others go. */
    async readPoolUse(input: { clusterId: string }): Promise<PoolUse> {
      return deps.pools?.use(input.clusterId) ?? { nodes: [], idleAfterMs: Number.MAX_SAFE_INTEGER, checkIntervalMs: 600_000 };
    },

    /**
     * Drains the idle top nodes of a pool (cordoned, no Kiln replica on them) and commits the pool's smaller size;
     * answers the desired state whose `pulumi up` removes them, or why nothing was.
     */
    async shrinkNodePool(request: PoolShrinkRequest): Promise<PoolShrinkResult> {
      return deps.pools?.shrink(request) ?? { shrunk: false, reason: 'no node pool can shrink' };
    },

    /** `pulumi destroy` and removal of the cluster's stack. */
    async destroyClusterStack(target: { clusterId: string; provider?: DesiredCluster['provider'] }): Promise<void> {
      const project = target.provider === 'local' ? LOCAL_CLUSTER_PROJECT : CLUSTER_PROJECT;
      await runActivityOperation(deps.pulumi, { project, stackName: target.clusterId, ...EMPTY_PROGRAM }, 'destroy');
    },
  };
}

export type ClusterActivities = ReturnType<typeof createClusterActivities>;
