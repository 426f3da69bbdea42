// Whether a `local` cluster's pools are there to be used: every node the pools declare is Ready, advertises its
// GPUs (kwok's node stage writes them) and has lost the not-ready taint the node lifecycle controller puts on a
// new node, so the scheduler places pods on it.
import { GPU_RESOURCE, GPU_TAINT } from '../../catalog/gpu-types.ts';
import type { KubeApi } from '../../lib/kubernetes/api.ts';
import { NODE_POOL_LABEL } from '../../stacks/local-gpu-pool/index.ts';
import type { DesiredLocalCluster } from '../contract/cluster.ts';

interface NodeList {
  items: {
    spec?: { taints?: { key: string }[] };
    status?: { allocatable?: Record<string, string>; conditions?: { type: string; status: string }[] };
  }[];
}

export async function poolsReady(api: KubeApi, desired: DesiredLocalCluster): Promise<boolean> {
  const selector = `${NODE_POOL_LABEL} in (${desired.nodePools.map((p) => p.name).join(',')})`;
  const nodes = await api.get<NodeList>(`/api/v1/nodes?labelSelector=${encodeURIComponent(selector)}`);
  const usable = nodes.items.filter((n) => (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
    && Number(n.status?.allocatable?.[GPU_RESOURCE] ?? 0) > 0
    && (n.spec?.taints ?? []).every((taint) => taint.key === GPU_TAINT.key));
  return usable.length === nodes.items.length && nodes.items.length === desired.nodePools.reduce((sum, p) => sum + p.desiredSize, 0);
}
