import { z } from 'zod';
import { GPU_TYPE_IDS } from '../../catalog/gpu-types.ts';
import type { NodeGroup as NodeGroupShape } from '../../catalog/node-groups.ts';
import type { NodePool as NodePoolShape } from '../../catalog/node-pools.ts';
import { CLUSTER_STATUSES } from '../../workflows/contract/cluster.ts';
import { ClusterWebhookPayload } from '../../lib/webhook-payloads.ts';
import { pageQuery } from '../core/pagination.ts';
import { CLUSTER_PROVIDERS } from './gpu-cluster.entity.ts';


export const clusterName = z.string().max(63).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label: lower-case letters, digits and hyphens, starting and ending with a letter or digit')
  .meta({ example: 'gpu-east' });
export const clusterKubeconfig = z.string().min(1).max(65_536).meta({
  description: 'Kubeconfig (YAML) whose current context reaches the cluster with a bearer token or a client certificate. Stored encrypted, never shown again.',
});
export const clusterGatewayUrl = z.url({ protocol: /^https?$/ }).max(2048).meta({
  description: 'For a cluster whose pod network Kiln cannot reach: inference goes to <gatewayUrl>/<namespace>/<deployment name>/v1/... instead of to the pods.',
  example: 'https://inference-gateway.gpu-east.example.com',
});
const [name, kubeconfig, gatewayUrl] = [clusterName, clusterKubeconfig, clusterGatewayUrl];
const size = z.number().int().min(0).max(1000);
const NodeGroup = z.strictObject({
  gpuType: z.enum(GPU_TYPE_IDS),
  minSize: size,
  desiredSize: size,
  maxSize: size.min(1),
}).meta({ id: 'ClusterNodeGroup' }) satisfies z.ZodType<NodeGroupShape>;
const nodeGroups = z.array(NodeGroup).min(1).max(GPU_TYPE_IDS.length);
// Types only: catalog/node-pools.ts holds the rule (the service applies it, as the stack does).
const NodePool = z.strictObject({
  name: z.string().max(63).meta({ description: 'Names the nodes <name>-0 to <name>-<desiredSize - 1>: a DNS label.', example: 'l4' }),
  gpuType: z.string().max(64).meta({ description: 'A GPU catalog id.', example: 'nvidia-l4' }),
  minSize: z.number(),
  desiredSize: z.number(),
  maxSize: z.number(),
  gpusPerNode: z.number().meta({ description: 'GPUs each node advertises.', example: 1 }),
}).meta({ id: 'ClusterNodePool', description: 'A pool of simulated GPU machines of a local cluster, shaped like an aws node group.' }) satisfies z.ZodType<NodePoolShape>;
const nodePools = z.array(NodePool).max(64);

export const CreateClusterRequest = z.discriminatedUnion('provider', [
  z.strictObject({ provider: z.literal('kubernetes'), name, kubeconfig, gatewayUrl: gatewayUrl.optional() }),
  z.strictObject({
    provider: z.literal('aws'),
    name,
    region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as us-east-1'),
    subnetIds: z.array(z.string().regex(/^subnet-[0-9a-f]{8,17}$/, 'must be a subnet id such as subnet-0123abcd')).min(2).max(16),
    kubernetesVersion: z.string().regex(/^1\.\d+$/, 'must be a Kubernetes minor version such as 1.33').optional(),
    nodeGroups,
    gatewayUrl: gatewayUrl.optional(),
  }),
  z.strictObject({
    provider: z.literal('local'),
    name,
    kubeconfig: kubeconfig.meta({ description: 'Kubeconfig (YAML) of the local control plane, whose GPU nodes Kiln declares as node pools (kwok runs them). Stored encrypted, never shown again.' }),
    nodePools,
    gatewayUrl: gatewayUrl.optional(),
  }),
]).meta({ id: 'CreateClusterRequest' });

/**
 * kubeconfig: `kubernetes` clusters (the GPUs are read again); nodeGroups: `aws` clusters, nodePools: `local`
 * clusters (the stack is applied again with them); gatewayUrl: null removes it.
 */
export const UpdateClusterRequest = z.strictObject({
  name: name.optional(), kubeconfig: kubeconfig.optional(), nodeGroups: nodeGroups.optional(), nodePools: nodePools.optional(), gatewayUrl: gatewayUrl.nullable().optional(),
}).meta({ id: 'UpdateClusterRequest' });

export const ClusterIdParams = z.object({ id: z.string().max(64) });

export const ClusterView = z.object({
  id: z.string().meta({ example: 'clu_0123456789abcdefghij' }),
  organizationId: z.string().nullable().meta({ description: 'The organization whose own cluster it is (registered through /v1/onboarding/providers); null: shared by every organization.' }),
  name: z.string(),
  provider: z.enum(CLUSTER_PROVIDERS),
  status: z.enum(CLUSTER_STATUSES),
  gpus: z.array(z.object({
    gpuType: z.string(),
    count: z.number().int().meta({ description: 'GPUs of the type the cluster offers.' }),
    inUse: z.number().int().meta({
      description: 'GPUs of the type its deployments hold: replicas x GPUs per replica of those deploying, running, scaling or updating. A type still held but no longer offered is listed with count 0.',
    }),
  })).meta({ description: 'GPUs the cluster offers and holds, per type.' }),
  region: z.string().nullable(),
  nodeGroups: z.array(NodeGroup).nullable(),
  nodePools: z.array(NodePool).nullable().meta({ description: 'A local cluster\'s node pools; null for the other providers.' }),
  gatewayUrl: z.string().nullable().meta({ description: 'Where inference reaches the deployments; null: their pods directly.' }),
  failureReason: z.string().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
}).meta({ id: 'GpuCluster' });

export const ListClusterEventsQuery = z.strictObject({ ...pageQuery }).meta({ id: 'ListClusterEventsQuery' });

export const ClusterEventView = z.object({
  id: z.string().meta({ example: 'cev_0123456789abcdefghij' }),
  type: z.enum(['cluster.pool_grown', 'cluster.pool_shrunk']).meta({ description: 'cluster.pool_grown: a pool grew for a deployment whose replicas could not be placed; cluster.pool_shrunk: idle nodes were drained and are being removed.' }),
  deploymentId: z.string().nullable().meta({ description: 'The deployment a growth was for; null for a shrink.' }),
  data: ClusterWebhookPayload.shape.data.meta({ description: 'What the event\'s webhook carries as data.' }),
  createdAt: z.iso.datetime(),
}).meta({ id: 'ClusterEvent' });

export type ListClusterEventsInput = z.output<typeof ListClusterEventsQuery>;
export type ClusterEventBody = z.infer<typeof ClusterEventView>;
export type CreateClusterInput = z.infer<typeof CreateClusterRequest>;
export type UpdateClusterInput = z.infer<typeof UpdateClusterRequest>;
export type ClusterViewBody = z.infer<typeof ClusterView>;
