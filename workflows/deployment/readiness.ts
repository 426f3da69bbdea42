// Readiness of a deployment's vLLM pods, read from the Kubernetes API: how many replicas are Ready and,
// when pods cannot be placed, the scheduler's own explanation (e.g. "Insufficient nvidia.com/gpu"). And the
// replicas a lost node took with it, which Kiln removes at once rather than waiting minutes for Kubernetes.
import { DEPLOYMENT_LABEL } from '../../catalog/model-server.ts';
import { KubeApiError, type KubeApi } from '../../lib/kubernetes/api.ts';
import type { LostReplica, Readiness } from './activities.ts';

interface PodList {
  items: { status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } }[];
}

interface PodPlacements {
  items: { metadata?: { name?: string }; spec?: { nodeName?: string } }[];
}

interface NodeList {
  items: { metadata?: { name?: string }; status?: { conditions?: { type: string; status: string }[] } }[];
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

const podsOf = (namespace: string, name: string) => `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`${DEPLOYMENT_LABEL}=${name}`)}`;

/** Why a node no longer runs what was placed on it: gone from the API server, or its Ready condition not True. */
function nodeLost(nodes: NodeList, name: string): LostReplica['why'] | undefined {
  const node = nodes.items.find((n) => n.metadata?.name === name);
  if (!node) return 'deleted';
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  return ready && ready.status !== 'True' ? 'not ready' : undefined;
}

export function kubernetesReadiness(api: KubeApi, namespaceOf: (organizationId: string) => string) {
  return {
    /**
     * Removes the deployment's pods bound to a node that was deleted or stopped being Ready (a host failure, a
     * spot preemption), with no grace: their kubelet is gone, so they would hold their GPUs and count as replicas
     * for minutes (the pod garbage collector, or the NotReady eviction after 5 minutes). Their ReplicaSet places
     * them again at once. Answers what it removed.
     */
    async replaceLost({ organizationId, name }: { organizationId: string; name: string }): Promise<LostReplica[]> {
      const namespace = namespaceOf(organizationId);
      const pods = await api.get<PodPlacements>(podsOf(namespace, name));
      const placed = pods.items.filter((pod) => pod.spec?.nodeName && pod.metadata?.name);
      if (!placed.length) return [];
      const nodes = await api.get<NodeList>('/api/v1/nodes');
      const lost: LostReplica[] = [];
      for (const pod of placed) {
        const why = nodeLost(nodes, pod.spec!.nodeName!);
        if (!why) continue;
        await api.request('DELETE', `/api/v1/namespaces/${namespace}/pods/${pod.metadata!.name}?gracePeriodSeconds=0`).catch((error: unknown) => {
          if (!(error instanceof KubeApiError && error.status === 404)) throw error; // 404: already gone
        });
        lost.push({ pod: pod.metadata!.name!, node: pod.spec!.nodeName!, why });
      }
      return lost;
    },

    async probe({ organizationId, name }: { organizationId: string; name: string }): Promise<Readiness> {
      const namespace = namespaceOf(organizationId);
      const deployment = await api.get<DeploymentObject>(`/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
      const pods = await api.get<PodList>(podsOf(namespace, name));
      const unschedulable = pods.items
        .flatMap((pod) => (pod.status?.conditions ?? []).filter((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable'));
      return {
        readyReplicas: currentReplicasAvailable(deployment), unschedulableReason: unschedulable[0]?.message,
        ...(unschedulable.length ? { unschedulableReplicas: unschedulable.length } : {}),
      };
    },
  };
}
