// The contract between the control plane and the cluster workflow (one per `aws` or `local` GPU cluster, workflow
// id = cluster id, on the deployments task queue): names, the message and argument types.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { NodeGroup } from '../../catalog/node-groups.ts';
import type { NodePool } from '../../catalog/node-pools.ts';

export const CLUSTER_WORKFLOW = 'clusterWorkflow';

/**
 * What the cluster's stack should be. Every change raises `generation`; older or repeated messages are
 * ignored, so duplicates are harmless.
 */
export type DesiredCluster = DesiredAwsCluster | DesiredLocalCluster;

interface DesiredClusterBase {
  readonly generation: number;
  readonly deleted: boolean;
}

/** The gpu-cluster stack: EKS and its node groups. */
export interface DesiredAwsCluster extends DesiredClusterBase {
  /** Absent from messages sent before `local` clusters existed. */
  readonly provider?: 'aws';
  readonly region: string;
  readonly subnetIds: readonly string[];
  readonly kubernetesVersion?: string;
  readonly nodeGroups: readonly NodeGroup[];
}

/** LocalGpuPool components on the cluster the registered kubeconfig reaches (which stays out of workflow history). */
export interface DesiredLocalCluster extends DesiredClusterBase {
  readonly provider: 'local';
  readonly nodePools: readonly NodePool[];
}

/** What a cluster record holds of its stack: an `aws` cluster's network and node groups, a `local` one's pools. */
export type ClusterSpec = Omit<DesiredAwsCluster, keyof DesiredClusterBase | 'provider'> | Omit<DesiredLocalCluster, keyof DesiredClusterBase | 'provider'>;

/** The desired state a cluster record stands for, as its workflow is sent it (by the control plane, or a pool's growth). */
export function desiredClusterOf(cluster: { generation: number; deleteRequested: boolean; provider: string; spec?: ClusterSpec | null }): DesiredCluster {
  const base = { generation: cluster.generation, deleted: cluster.deleteRequested };
  if (cluster.provider === 'local') return { ...base, provider: 'local', nodePools: (cluster.spec as DesiredLocalCluster).nodePools };
  const { region, subnetIds, kubernetesVersion, nodeGroups } = cluster.spec as DesiredAwsCluster;
  return { ...base, provider: 'aws', region, subnetIds, kubernetesVersion, nodeGroups };
}

export interface ClusterWorkflowInput {
  readonly clusterId: string;
  readonly name: string;
  readonly desired: DesiredCluster;
  /** Carried across continue-as-new. */
  readonly resume?: {
    readonly appliedGeneration: number;
    readonly progress: ClusterProgress;
    /** A `local` cluster's pool nodes running no Kiln replica, and since when (workflow time, ms). */
    readonly idleSince?: Readonly<Record<string, number>>;
  };
}

/** A cluster's lifecycle statuses: what the workflow reports and the API stores. */
export const CLUSTER_STATUSES = ['provisioning', 'ready', 'scaling', 'failed', 'deleting', 'deleted'] as const;
export type ClusterLifecycleStatus = (typeof CLUSTER_STATUSES)[number];

export interface ClusterProgress {
  readonly status: ClusterLifecycleStatus;
  readonly observedGeneration: number;
  readonly failureReason?: string;
}

export const desiredClusterSignal = defineSignal<[DesiredCluster]>('desiredCluster');
export const clusterProgressQuery = defineQuery<ClusterProgress>('clusterProgress');
