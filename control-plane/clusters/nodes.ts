// What an existing Kubernetes cluster offers, read from its nodes: the GPU type each node is labelled with
// (kiln.dev/gpu-type) and the GPUs it can allocate (nvidia.com/gpu, advertised by the NVIDIA device plugin).
import { GPU_RESOURCE, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import type { KubeApi } from '../../lib/kubernetes/api.ts';
import type { ClusterGpus } from './gpu-cluster.entity.ts';

interface NodeList {
  items: { metadata: { labels?: Record<string, string> }; spec?: { unschedulable?: boolean }; status?: { allocatable?: Record<string, string> } }[];
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
