// Readiness of a deployment's vLLM pods, read from the Kubernetes API: how many replicas are Ready and,
// when pods cannot be placed, the scheduler's own explanation (e.g. "Insufficient nvidia.com/gpu").
import { DEPLOYMENT_LABEL } from '../../catalog/model-server.ts';
import type { KubeApi } from '../../lib/kubernetes/api.ts';
import type { Readiness } from './activities.ts';

interface PodList {
  items: { status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } }[];
}

interface DeploymentObject {
  metadata?: { generation?: number };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
}

/**
 * Available replicas of the current pod template, as `kubectl rollout status` judges a rollout: while the
 * controller has not seen the newest spec, or pods of an older template remain, the change has not landed
 * and none counts (old pods being Ready says nothing about the new model or GPU).
 */
function currentReplicasAvailable(deployment: DeploymentObject): number {
  const { observedGeneration = 0, replicas = 0, updatedReplicas = 0, availableReplicas = 0 } = deployment.status ?? {};
  const rolledOut = observedGeneration >= (deployment.metadata?.generation ?? 0) && replicas <= updatedReplicas;
  return rolledOut ? Math.min(updatedReplicas, availableReplicas) : 0;
}

export function kubernetesReadiness(api: KubeApi, namespaceOf: (organizationId: string) => string) {
  return {
    async probe({ organizationId, name }: { organizationId: string; name: string }): Promise<Readiness> {
      const namespace = namespaceOf(organizationId);
      const deployment = await api.get<DeploymentObject>(`/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
      const pods = await api.get<PodList>(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`${DEPLOYMENT_LABEL}=${name}`)}`);
      const unschedulable = pods.items
        .flatMap((pod) => (pod.status?.conditions ?? []).filter((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable'));
      return {
        readyReplicas: currentReplicasAvailable(deployment), unschedulableReason: unschedulable[0]?.message,
        ...(unschedulable.length ? { unschedulableReplicas: unschedulable.length } : {}),
      };
    },
  };
}
