// A simulated GPU machine of Kiln's local cluster, as a Node object: the one definition the local cluster's own
// nodes (infra/servers/gpu-cluster.ts) and the LocalGpuPool component both declare.
//
// A Node's status cannot be written with the object (the provider declares no status, and an update keeps the old
// one), so the node carries what it offers as labels: kwok manages it (the annotation) and its node stage
// (infra/servers/kwok-stages.ts) writes capacity and allocatable from SIMULATED_NODE_RESOURCES and GPU_COUNT_LABEL.
import { GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';

/** kwok manages the nodes with this annotation (`--manage-nodes-with-annotation-selector`) and plays their kubelet. */
export const KWOK_NODE_ANNOTATION = { 'kwok.x-k8s.io/node': 'fake' } as const;
/** GPUs a node has (the name NVIDIA's GPU feature discovery gives it); kwok advertises that many `nvidia.com/gpu`. */
export const GPU_COUNT_LABEL = 'nvidia.com/gpu.count';
/** The pool a node belongs to, `<pool>` of its name `<pool>-<index>`. */
export const NODE_POOL_LABEL = 'kiln.dev/node-pool';
/** What every simulated node offers besides its GPUs: room for any model server's requests. */
export const SIMULATED_NODE_RESOURCES = { cpu: '96', memory: '1024Gi', pods: '110' } as const;

export interface SimulatedGpuNode {
  readonly metadata: { readonly name: string; readonly annotations: Record<string, string>; readonly labels: Record<string, string> };
  readonly spec: { readonly taints: (typeof GPU_TAINT)[] };
}

/** Node `<pool>-<index>` of a pool of `gpusPerNode`-GPU machines of `gpuType`. */
export function simulatedGpuNode(pool: string, index: number, gpuType: string, gpusPerNode: number): SimulatedGpuNode {
  const name = `${pool}-${index}`;
  return {
    metadata: {
      name,
      // No TTL: the API server's TTL controller would otherwise set one from the cluster's size.
      annotations: { ...KWOK_NODE_ANNOTATION, 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok',
        [NODE_POOL_LABEL]: pool, [GPU_TYPE_LABEL]: gpuType, [GPU_COUNT_LABEL]: String(gpusPerNode),
      },
    },
    spec: { taints: [GPU_TAINT] },
  };
}
