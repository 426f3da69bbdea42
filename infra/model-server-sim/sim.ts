// Kiln's model server simulator: simulated vLLM servers for the local cluster, the way kwok gives it simulated
// GPUs. It follows the vLLM pods of a cluster through its API (list, then watch) and, for each pod that is Ready,
// answers on the pod's IP and vLLM port; when the pod stops being Ready or goes away, so does its server. On a
// laptop pod IPs are loopback addresses (infra/servers/gpu-cluster.ts), so a pod's address really answers.
// A real cluster runs vLLM itself: nothing here is used there.
import { setTimeout as sleep } from 'node:timers/promises';
import { VLLM_PODS_SELECTOR } from '../../catalog/model-server.ts';
import type { KubeApi } from '../../lib/kubernetes/api.ts';
import { watchCollection } from '../../lib/kubernetes/watch.ts';
import { startModelServer, type ModelServer } from './model-server.ts';
import { DEFAULT_SIM_SETTINGS, inCidr, podKey, podLogFile, serverConfig, shouldServe, vllmContainer, type Pod, type SimDefaults } from './pods.ts';
import { openServerLog } from './server-log.ts';

export interface ModelServerSimOptions {
  readonly api: KubeApi;
  /** Folder of the pods' vLLM logs, one file per pod. */
  readonly logDir: string;
  /** The cluster's pod IP range: pods with an IP outside it are not served (the simulator binds no other address). */
  readonly podCidr?: string;
  readonly defaults?: Partial<SimDefaults>;
  /**
   * Registers each pod's log file with kwok (a `Logs` object named after the pod), so the API server's
   * pods/log answers with it; needs kwok run with `--enable-crds=Logs` and its CRD installed.
   */
  readonly kwokLogs?: boolean;
  /** The simulator's own log lines (what it starts and stops, and why something failed). */
  readonly say?: (line: string) => void;
}

export interface ModelServerSim {
  /** Settles once the pods that existed at start have been seen. */
  readonly synced: Promise<void>;
  stop(): Promise<void>;
}

interface PodEntry {
  server?: ModelServer;
  /** Restart count of the pod's container whose crash has been logged. */
  crashesLogged: number;
  logRegistered: boolean;
  /** Changes to one pod's server are made one after another. */
  queue: Promise<void>;
}

/**
 * kwok hands a deleted pod's IP to the next pod: if the old pod's server has not let go of it yet, the new
 * one tries again for a few seconds.
 */
async function startWhenFree(start: () => Promise<ModelServer>, attempts = 25): Promise<ModelServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= attempts) throw error;
      await sleep(200);
    }
  }
}

export function startModelServerSim(options: ModelServerSimOptions): ModelServerSim {
  const defaults: SimDefaults = { ...DEFAULT_SIM_SETTINGS, ...options.defaults };
  const say = options.say ?? (() => {});
  const pods = new Map<string, PodEntry>();
  const abort = new AbortController();
  let stopping = false;

  const registerLog = async (pod: Pod, entry: PodEntry) => {
    if (!options.kwokLogs || entry.logRegistered) return;
    const { name, namespace = 'default', uid } = pod.metadata ?? {};
    await options.api.ensure(`/apis/kwok.x-k8s.io/v1alpha1/namespaces/${namespace}/logs`, {
      apiVersion: 'kwok.x-k8s.io/v1alpha1',
      kind: 'Logs',
      // Owned by the pod, so the garbage collector removes it with the pod.
      metadata: { name, namespace, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid }] },
      spec: { logs: [{ containers: [vllmContainer(pod)?.name ?? 'vllm'], logsFile: podLogFile(options.logDir, pod), follow: true }] },
    });
    entry.logRegistered = true;
  };

  /** A crash-looping pod's log says why it failed, once per restart, as a vLLM that cannot start would. */
  const logCrash = async (pod: Pod, entry: PodEntry) => {
    const status = pod.status?.containerStatuses?.find((c) => c.name === vllmContainer(pod)?.name);
    if (status?.state?.waiting?.reason !== 'CrashLoopBackOff' || (status.restartCount ?? 0) < entry.crashesLogged) return;
    entry.crashesLogged = (status.restartCount ?? 0) + 1;
    const config = serverConfig({ ...pod, status: { ...pod.status, podIP: pod.status?.podIP ?? '' } }, defaults, options.logDir);
    const log = await openServerLog(config.logFile);
    log.info('api_server.py:1839', `vLLM API server version ${config.version}`);
    log.info('utils.py:233', `non-default args: ${JSON.stringify({ model: config.model, tensor_parallel_size: config.tensorParallelSize })}`);
    log.info('model-server-sim', 'This is Kiln\'s simulated vLLM (infra/model-server-sim). A real cluster runs vLLM.');
    log.error('core.py:708', 'EngineCore failed to start.');
    log.error('core.py:708', 'RuntimeError: simulated failure: this pod is marked to fail (annotation sim.kiln.dev/fail, or a model the local cluster fails)');
    await log.close();
    await registerLog(pod, entry);
  };

  const reconcile = (pod: Pod, deleted: boolean) => {
    const key = pod.metadata?.uid ?? podKey(pod);
    let entry = pods.get(key);
    if (!entry) pods.set(key, entry = { crashesLogged: 0, logRegistered: false, queue: Promise.resolve() });
    const current = entry;
    current.queue = current.queue.then(async () => {
      const ip = pod.status?.podIP ?? '';
      const inRange = !options.podCidr || inCidr(ip, options.podCidr);
      const serve = !deleted && !stopping && shouldServe(pod) && inRange;
      if (shouldServe(pod) && !inRange && !current.server) say(`${podKey(pod)}: not serving ${ip}, outside the pod range ${options.podCidr}`);
      if (serve && !current.server) {
        const config = serverConfig(pod, defaults, options.logDir);
        current.server = await startWhenFree(() => startModelServer(config));
        say(`${podKey(pod)}: serving ${config.model} on ${current.server.address}`);
        await registerLog(pod, current);
      } else if (!serve && current.server) {
        const { address } = current.server;
        await current.server.close();
        current.server = undefined;
        say(`${podKey(pod)}: stopped serving on ${address}`);
      }
      if (!deleted && !stopping) await logCrash(pod, current);
      if (deleted) pods.delete(key);
    }).catch((error: Error) => say(`${podKey(pod)}: ${error.message}`));
  };

  const watch = watchCollection<Pod>(options.api, `/api/v1/pods?labelSelector=${encodeURIComponent(VLLM_PODS_SELECTOR)}`,
    (event) => reconcile(event.object, event.type === 'DELETED'),
    { signal: abort.signal, onError: (error) => say(`watching pods: ${error.message}`) });

  return {
    synced: watch.synced,
    async stop() {
      stopping = true;
      abort.abort();
      await Promise.all([...pods.values()].map(async (entry) => {
        await entry.queue;
        await entry.server?.close();
      }));
    },
  };
}
