import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import type { NodeGroup } from '../../catalog/node-groups.ts';
import type { NodePool } from '../../catalog/node-pools.ts';
import type { ClusterLifecycleStatus } from '../../workflows/contract/cluster.ts';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

/**
 * `aws`: an EKS cluster Kiln provisions with the gpu-cluster stack; `kubernetes`: an existing cluster registered by
 * kubeconfig; `local`: the local control plane, registered by kubeconfig, whose GPU nodes Kiln provisions as node pools.
 */
export const CLUSTER_PROVIDERS = ['aws', 'kubernetes', 'local'] as const;
export type ClusterProvider = (typeof CLUSTER_PROVIDERS)[number];

/** GPUs a cluster offers: how many of one catalog type. */
export interface ClusterGpus {
  readonly gpuType: string;
  readonly count: number;
}

/** What the gpu-cluster stack of an `aws` cluster is asked to build. */
export interface AwsClusterSpec {
  readonly region: string;
  readonly subnetIds: readonly string[];
  readonly kubernetesVersion?: string;
  readonly nodeGroups: readonly NodeGroup[];
  /** The last growth of a node group for a deployment (workflows/cluster/pool-growth.ts): a retried request finds it made. */
  readonly lastGrowth?: { readonly requestId: string; readonly reason: string; readonly events?: readonly string[] };
}

/** What the node-pool stack of a `local` cluster is asked to build. */
export interface LocalClusterSpec {
  readonly nodePools: readonly NodePool[];
  /** The last growth of a pool for a deployment (workflows/cluster/pool-growth.ts): a retried request finds it made. */
  readonly lastGrowth?: { readonly requestId: string; readonly reason: string; readonly events?: readonly string[] };
  /** The last shrink of a pool after idle time (workflows/cluster/pool-shrink.ts): a retried request finds it made. */
  readonly lastShrink?: { readonly requestId: string; readonly reason: string; readonly nodes: readonly string[]; readonly events: readonly string[] };
}

/**
 * A GPU cluster deployments run on: platform infrastructure shared by every organization, or an
 * organization's own (registered through /v1/onboarding/providers), which only it sees and is placed on. Its
 * kubeconfig (given at registration, or the gpu-cluster stack's output) is sealed at rest.
 */
export const GpuClusterSchema = defineEntity({
  name: 'GpuCluster',
  extends: BaseSchema,
  properties: {
    /** The organization whose own cluster it is; null: shared by every organization. */
    organization: () => p.manyToOne(OrganizationSchema).ref().nullable(),
    name: p.string(),
    provider: p.string().$type<ClusterProvider>(),
    /** As its workflow reports it (the contract's CLUSTER_STATUSES). */
    status: p.string().$type<ClusterLifecycleStatus>(),
    sealedKubeconfig: p.text().nullable(),
    /**
     * Where inference reaches the cluster's deployments when Kiln cannot reach its pod network: requests go
     * to `<gatewayUrl>/<namespace>/<deployment name>/v1/...` instead of to the pods. Null: to the pods.
     */
    gatewayUrl: p.text().nullable(),
    gpus: p.json<ClusterGpus[]>(),
    /** `aws` and `local` clusters only, as their provider says. */
    spec: p.json<AwsClusterSpec | LocalClusterSpec>().nullable(),
    /** Raised by every change of an `aws` or `local` cluster's spec; its workflow converges on the highest it has seen. */
    generation: p.integer().default(1),
    /** The highest generation its workflow has been sent; lower than `generation` while a change waits for redelivery (clusters/delivery.ts). */
    sentGeneration: p.integer().default(0),
    deleteRequested: p.boolean().default(false),
    failureReason: p.text().nullable(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
    deletedAt: p.datetime().nullable(),
  },
});

export type GpuClusterRecord = InferEntity<typeof GpuClusterSchema>;

/**
 * The provider a cluster's provisioning circuits are keyed by (recovery/circuits.ts): the shared clusters
 * share their provider's, an organization's own cluster has its own, so its failures never refuse anyone else.
 */
export function circuitProviderOf(cluster: Pick<GpuClusterRecord, 'id' | 'provider' | 'organization'>): string {
  return cluster.organization ? `${cluster.provider}:${cluster.id}` : cluster.provider;
}

/** The own cluster a circuit provider key names (`kubernetes:clu_...`); null for a shared provider's. */
export function ownClusterOfCircuit(provider: string): string | null {
  const at = provider.indexOf(':');
  return at < 0 ? null : provider.slice(at + 1);
}
