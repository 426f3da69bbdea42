// What an existing Kubernetes cluster offers, read from its nodes: the GPU type each node is labelled with
// (kiln.dev/gpu-type) and the GPUs it can allocate (nvidia.com/gpu, advertised by the NVIDIA device plugin).
import { GPU_RESOURCE, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import type { KubeApi } from '../../lib/kubernetes/api.ts';
import type { ClusterGpus } from './gpu-cluster.entity.ts';

interface NodeList {
  items: { metadata: { name: string; labels?: Record<string, string> }; spec?: { unschedulable?: boolean }; status?: { allocatable?: Record<string, string> } }[];
}

/** GPUs per type over the schedulable labelled nodes, sorted by type. */
export async function readClusterGpus(api: KubeApi): Promise<ClusterGpus[]> {
  const nodes = await api.get<NodeList>(`/api/v1/nodes?labelSelector=${encodeURIComponent(GPU_TYPE_LABEL)}`);
  const counts = new Map<string, number>();
  for (const node of nodes.items) {
    const gpuType = node.metadata.labels?.[GPU_TYPE_LABEL];
    const gpus = Number.parseInt(node.status?.allocatable?.[GPU_RESOURCE] ?? '0', 10);
    if (!gpuType || node.spec?.unschedulable || !(gpus > 0)) continue;
    counts.set(gpuType, (counts.get(gpuType) ?? 0) + gpus);
  }
  return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([gpuType, count]) => ({ gpuType, count }));
}

interface PodList {
  items: { spec?: { nodeName?: string; containers?: { resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }[] } }[];
}

/**
 * The GPUs free now on each schedulable node of `gpuType`: its allocatable GPUs less those the pods bound to
 * it request (pods that ended hold none). A replica's GPUs must all be on one node, so callers pack per node.
 */
export async function readFreeGpusPerNode(api: KubeApi, gpuType: string): Promise<number[]> {
  const selector = encodeURIComponent(`${GPU_TYPE_LABEL}=${gpuType}`);
  const [nodes, pods] = await Promise.all([
    api.get<NodeList>(`/api/v1/nodes?labelSelector=${selector}`),
    api.get<PodList>(`/api/v1/pods?fieldSelector=${encodeURIComponent('status.phase!=Succeeded,status.phase!=Failed')}`),
  ]);
  const requested = new Map<string, number>();
  for (const pod of pods.items) {
    const node = pod.spec?.nodeName;
    if (!node) continue;
    // Extended resources such as GPUs are requested as their limit when no request is given.
    const gpus = (pod.spec?.containers ?? []).reduce((sum, c) => sum + Number.parseInt(c.resources?.requests?.[GPU_RESOURCE] ?? c.resources?.limits?.[GPU_RESOURCE] ?? '0', 10), 0);
    if (gpus > 0) requested.set(node, (requested.get(node) ?? 0) + gpus);
  }
  return nodes.items
    .filter((node) => !node.spec?.unschedulable)
    .map((node) => Math.max(0, Number.parseInt(node.status?.allocatable?.[GPU_RESOURCE] ?? '0', 10) - (requested.get(node.metadata.name) ?? 0)));
}
