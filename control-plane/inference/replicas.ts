// Where a deployment's model server answers: its Ready pods, found by label through its cluster's API, as
// vLLM production-stack's router finds them. One list-then-watch per cluster and namespace (one
// organization's deployments on one cluster) is kept warm and shared by every request, and stopped once no
// request has asked for it for a while: requests never poll the API server.
import type { Logger } from 'pino';
import { DEPLOYMENT_LABEL, VLLM_PODS_SELECTOR, VLLM_PORT, VLLM_PORT_NAME } from '../../catalog/model-server.ts';
import { kubeApiFromKubeconfig } from '../../lib/kubernetes/api.ts';
import { watchCollection, type KubeObject } from '../../lib/kubernetes/watch.ts';

/** One Ready pod of a deployment: where its model server listens. */
export interface Replica {
  readonly pod: string;
  readonly address: string;
  readonly port: number;
}

export interface Pod extends KubeObject {
  metadata?: KubeObject['metadata'] & { labels?: Record<string, string>; deletionTimestamp?: string };
  spec?: { containers?: Array<{ ports?: Array<{ name?: string; containerPort?: number }> }> };
  status?: { podIP?: string; conditions?: Array<{ type: string; status: string }> };
}

/** The replica a pod is while it can take requests: Ready, with an address, not being deleted (as Endpoints count it). */
export function replicaOf(pod: Pod): Replica | undefined {
  const name = pod.metadata?.name;
  const address = pod.status?.podIP;
  const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  if (!name || !address || !ready || pod.metadata?.deletionTimestamp) return undefined;
  const port = pod.spec?.containers?.flatMap((c) => c.ports ?? []).find((p) => p.name === VLLM_PORT_NAME)?.containerPort ?? VLLM_PORT;
  return { pod: name, address, port };
}

export interface ReplicaDirectoryOptions {
  /** A watch no request has used for this long is stopped. */
  readonly idleMs: number;
  /** The first list of a new watch must arrive within this, or the request fails (and the next one tries again). */
  readonly syncTimeoutMs: number;
}

/** How to reach one cluster's API. */
export interface ClusterApiAccess {
  readonly clusterId: string;
  readonly kubeconfig: string;
}

interface NamespaceWatch {
  readonly kubeconfig: string;
  readonly controller: AbortController;
  readonly synced: Promise<void>;
  listed: boolean;
  /** Pod name -> the deployment it serves and, while Ready, where it answers. */
  readonly pods: Map<string, { deployment: string; replica: Replica | undefined }>;
  readonly idle: NodeJS.Timeout;
}

export function createReplicaDirectory(deps: { log: Pick<Logger, 'warn'>; options: ReplicaDirectoryOptions }) {
  const watches = new Map<string, NamespaceWatch>();

  function stop(key: string): void {
    const watch = watches.get(key);
    if (!watch) return;
    watches.delete(key);
    clearTimeout(watch.idle);
    watch.controller.abort();
  }

  function start(key: string, cluster: ClusterApiAccess, namespace: string): NamespaceWatch {
    const controller = new AbortController();
    const pods: NamespaceWatch['pods'] = new Map();
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods?labelSelector=${encodeURIComponent(VLLM_PODS_SELECTOR)}`;
    const { synced } = watchCollection<Pod>(kubeApiFromKubeconfig(cluster.kubeconfig), path, ({ type, object }) => {
      const name = object.metadata?.name;
      const deployment = object.metadata?.labels?.[DEPLOYMENT_LABEL];
      if (!name) return;
      if (type === 'DELETED' || !deployment) pods.delete(name);
      else pods.set(name, { deployment, replica: replicaOf(object) });
    }, {
      signal: controller.signal,
      onError: (error) => deps.log.warn({ err: error, clusterId: cluster.clusterId, namespace }, 'pod watch interrupted; it resumes by itself'),
    });
    const idle = setTimeout(() => stop(key), deps.options.idleMs).unref();
    const watch: NamespaceWatch = { kubeconfig: cluster.kubeconfig, controller, synced, listed: false, pods, idle };
    synced.then(() => { watch.listed = true; }, () => {});
    watches.set(key, watch);
    return watch;
  }

  async function firstList(key: string, watch: NamespaceWatch): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no pod list from the cluster's API within ${deps.options.syncTimeoutMs} ms`)), deps.options.syncTimeoutMs);
    });
    try {
      await Promise.race([watch.synced, timeout]);
    } catch (error) {
      // Not kept: the next request starts afresh rather than waiting on a watch that never listed.
      if (watches.get(key) === watch) stop(key);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    /**
     * The Ready replicas of deployment `name` in `namespace`. The first call for a cluster and namespace
     * starts their watch and waits for its first list; later calls answer from memory.
     */
    async ready(cluster: ClusterApiAccess, namespace: string, name: string): Promise<Replica[]> {
      const key = `${cluster.clusterId}/${namespace}`;
      let watch = watches.get(key);
      // A cluster given a new kubeconfig is watched again with it.
      if (watch && watch.kubeconfig !== cluster.kubeconfig) stop(key);
      watch = watches.get(key) ?? start(key, cluster, namespace);
      watch.idle.refresh();
      if (!watch.listed) await firstList(key, watch);
      return [...watch.pods.values()].flatMap((p) => (p.deployment === name && p.replica ? [p.replica] : []));
    },

    /** How many cluster namespaces are being watched. */
    watching: (): number => watches.size,

    /** Stops every watch. */
    close(): void {
      for (const key of [...watches.keys()]) stop(key);
    },
  };
}

export type ReplicaDirectory = ReturnType<typeof createReplicaDirectory>;
