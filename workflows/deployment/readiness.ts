// Readiness of a deployment's vLLM pods, read from the Kubernetes API: how many replicas are Ready and,
// when pods cannot be placed, the scheduler's own explanation (e.g. "Insufficient nvidia.com/gpu").
import type { KubeApi } from '../../infra/servers/kube-api.ts';
import type { Readiness } from './activities.ts';

interface PodList {
  items: { status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } }[];
}

export function kubernetesReadiness(api: KubeApi, namespaceOf: (organizationId: string) => string) {
  return {
    async probe({ organizationId, name }: { organizationId: string; name: string }): Promise<Readiness> {
      const namespace = namespaceOf(organizationId);
      const deployment = await api.get<{ status?: { readyReplicas?: number } }>(`/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
      const pods = await api.get<PodList>(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`app.kubernetes.io/instance=${name}`)}`);
      const unschedulable = pods.items
        .flatMap((pod) => pod.status?.conditions ?? [])
        .find((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable');
      return { readyReplicas: deployment.status?.readyReplicas ?? 0, unschedulableReason: unschedulable?.message };
    },
  };
}
