// The local GPU cluster: a real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler) whose nodes are kwok-simulated GPU machines. Pods are really scheduled by GPU count,
// type label and taint; kwok then plays the kubelet and turns them Ready after a short delay, and the model
// server simulator (infra/model-server-sim) answers as vLLM on each Ready vLLM pod's IP.
//
// Networking is loopback only: pod IPs come from a /16 of 127.0.0.0/8 owned by this cluster (so a pod's IP
// really answers on this machine), nodes' InternalIP is 127.0.0.1 where kwok's kubelet API listens. Because
// Kubernetes refuses loopback addresses in EndpointSlices, Services here have no endpoints: clients reach pods
// by their IPs.
import { generateKeyPairSync, randomBytes, randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import { simulatedGpuNode } from '../../stacks/local-gpu-pool/node.ts';
import type { SimDefaults } from '../model-server-sim/pods.ts';
import { binaryPath } from '../tools/paths.ts';
import { KubeApiError, kubeApi, type KubeApi, type KubeCredentials } from '../../lib/kubernetes/api.ts';
import { freePort, logTail, startProcess, waitUntilReady, type ServerProcess } from './process.ts';
import { KWOK_LOGS_CRD, kwokConfig } from './kwok-stages.ts';

/** A group of identical simulated GPU machines. */
export interface GpuNodePool {
  readonly gpuType: string;
  readonly nodes: number;
  readonly gpusPerNode: number;
}

export interface GpuCluster {
  readonly kubeconfig: string;
  readonly credentials: KubeCredentials;
  readonly api: KubeApi;
  /** The loopback range pod IPs come from, e.g. `127.64.0.0/16`. */
  readonly podCidr: string;
  /** Folder of the simulated vLLM servers' logs, one file per pod (also served as the pods' logs). */
  readonly podLogDir: string;
  /** Adds simulated GPU nodes (also used to add capacity later). */
  addNodes(pool: GpuNodePool): Promise<void>;
  stop(): Promise<void>;
}

export interface GpuClusterOptions {
  readonly dataDir: string;
  /**
   * Nodes made at start, directly through the API server (tests and benches); none when absent: `npm start` has
   * Kiln provision them as its `local` cluster's node pools.
   */
  readonly nodePools?: readonly GpuNodePool[];
  /**
   * First of four consecutive loopback ports (etcd client, etcd peer, apiserver, kwok), fixed so a cluster
   * kept in `dataDir` restarts on the addresses it was made with; free ports when absent (tests).
   */
  readonly basePort?: number;
  /** Milliseconds before a scheduled pod turns Ready. */
  readonly podReadyDelayMs?: number;
  /**
   * Second byte of the pod IP range 127.N.0.0/16, 64 to 127; 64 when `basePort` is set (so a kept cluster's
   * pods keep their range), else a free one from 65 up. A range is held by one cluster at a time on this machine.
   */
  readonly podNetwork?: number;
  /** Settings of the simulated vLLM servers (time to first token, per-token time, batch size...). */
  readonly modelServers?: Partial<SimDefaults>;
  /** Models whose pods fail (crash-loop, never Ready) as pods annotated `sim.kiln.dev/fail: "true"` do. */
  readonly failingModels?: readonly string[];
  /** Milliseconds between two restarts of a failing pod; 10 s (the kubelet's first back-off) when absent. */
  readonly crashLoopIntervalMs?: number;
}

/** Pod IP ranges are 127.N.0.0/16 for N in this span, clear of 127.0.0.1 and the addresses tools use. */
const POD_NETWORKS = { first: 64, last: 127 } as const;
/** `npm start`'s cluster (a fixed basePort) keeps this range across restarts. */
const KEPT_CLUSTER_POD_NETWORK = 64;
/** A cluster holds its range by listening on 127.N.0.0 (an address no pod gets) at this port. */
const POD_NETWORK_CLAIM_PORT = 16439;
/** Where kwok's kubelet API listens and what nodes give as their InternalIP. */
const NODE_IP = '127.0.0.1';

export async function startGpuCluster(options: GpuClusterOptions): Promise<GpuCluster> {
  const dir = join(options.dataDir, 'kube');
  const logs = join(options.dataDir, 'logs');
  const pki = join(dir, 'pki');
  await mkdir(pki, { recursive: true });
  const { token } = await ensureSecrets(dir);
  const started: ServerProcess[] = [];
  const claim = await claimPodNetwork(options.podNetwork ?? (options.basePort ? KEPT_CLUSTER_POD_NETWORK : undefined));
  const stop = async () => {
    for (const s of started.reverse()) await s.stop();
    await new Promise((resolve) => claim.server.close(resolve));
  };

  try {
    const { basePort } = options;
    const [etcdPort, etcdPeerPort, apiPort, kwokPort] = basePort
      ? [basePort, basePort + 1, basePort + 2, basePort + 3]
      : await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const etcd = await startProcess('etcd', binaryPath('etcd'), [
      '--name', 'kiln', '--data-dir', join(dir, 'etcd'),
      '--listen-client-urls', `http://127.0.0.1:${etcdPort}`, '--advertise-client-urls', `http://127.0.0.1:${etcdPort}`,
      '--listen-peer-urls', `http://127.0.0.1:${etcdPeerPort}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${etcdPeerPort}`,
      '--initial-cluster', `kiln=http://127.0.0.1:${etcdPeerPort}`,
      '--unsafe-no-fsync', '--log-level', 'warn',
    ], { logFile: join(logs, 'etcd.log') });
    started.push(etcd);
    await waitUntilReady(etcd, async () => (await fetch(`http://127.0.0.1:${etcdPort}/health`)).ok);

    const apiServer = await startProcess('kube-apiserver', binaryPath('kubernetes', 'kube-apiserver'), [
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1', `--secure-port=${apiPort}`,
      // With no certificate given, the apiserver makes a self-signed one here; the kubeconfig trusts it.
      `--cert-dir=${pki}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--authorization-mode=RBAC',
      `--service-account-key-file=${join(pki, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      '--service-cluster-ip-range=10.96.0.0/16',
      // Pod logs: the API server calls a node's kubelet (kwok) at its InternalIP, never at its host name.
      '--kubelet-preferred-address-types=InternalIP',
      '--allow-privileged=true',
      '--enable-priority-and-fairness=false',
    ], { logFile: join(logs, 'kube-apiserver.log') });
    started.push(apiServer);
    const server = `https://127.0.0.1:${apiPort}`;
    await waitUntilReady(apiServer, async () => existsSync(join(pki, 'apiserver.crt')));
    const credentials: KubeCredentials = { server, ca: await readFile(join(pki, 'apiserver.crt'), 'utf8'), token };
    const api = kubeApi(credentials);
    await waitUntilReady(apiServer, async () => (await api.get<string>('/readyz')) === 'ok');

    const kubeconfig = join(dir, 'kubeconfig.yaml');
    await writeFile(kubeconfig, kubeconfigYaml(credentials));
    for (const [name, args] of [
      ['kube-controller-manager', [`--service-account-private-key-file=${join(pki, 'sa.key')}`, `--root-ca-file=${join(pki, 'apiserver.crt')}`, '--use-service-account-credentials=false']],
      ['kube-scheduler', []],
    ] as const) {
      started.push(await startProcess(name, binaryPath('kubernetes', name), [
        `--kubeconfig=${kubeconfig}`, '--leader-elect=false', '--secure-port=0', ...args,
      ], { logFile: join(logs, `${name}.log`) }));
    }

    // kwok reads which file is a pod's log from `Logs` objects, which the model server simulator creates.
    await api.ensure('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', KWOK_LOGS_CRD);
    await waitUntilReady(apiServer, async () => {
      const crd = await api.get<{ status?: { conditions?: { type: string; status: string }[] } }>(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${KWOK_LOGS_CRD.metadata.name}`);
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    });

    const kwokConfigFile = join(dir, 'kwok.yaml');
    await writeFile(kwokConfigFile, kwokConfig({
      podReadyDelayMs: options.podReadyDelayMs ?? 2000, kubeletPort: kwokPort,
      failingModels: options.failingModels, crashLoopIntervalMs: options.crashLoopIntervalMs,
    }));
    const kwok = await startProcess('kwok', binaryPath('kwok'), [
      `--kubeconfig=${kubeconfig}`, `--config=${kwokConfigFile}`,
      '--manage-all-nodes=false', '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      `--server-address=${NODE_IP}:${kwokPort}`, `--cidr=${claim.cidr.replace('.0.0/', '.0.1/')}`, `--node-ip=${NODE_IP}`,
      '--enable-crds=Logs',
    ], { logFile: join(logs, 'kwok.log') });
    started.push(kwok);

    // Pods need the `default` service account, which the controller manager creates.
    await waitUntilReady(kwok, async () => !!(await api.get('/api/v1/namespaces/default/serviceaccounts/default')));
    await moveToLoopback(api, claim.cidr, kwokPort);

    const podLogDir = join(options.dataDir, 'pod-logs');
    const sim = await startProcess('model-server-sim', process.execPath, [
      fileURLToPath(new URL('../model-server-sim/main.ts', import.meta.url)),
      `--kubeconfig=${kubeconfig}`, `--log-dir=${podLogDir}`, `--pod-cidr=${claim.cidr}`, '--kwok-logs',
      ...Object.entries(options.modelServers ?? {}).map(([key, value]) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}=${value}`),
    ], { logFile: join(logs, 'model-server-sim.log') });
    started.push(sim);
    await waitUntilReady(sim, async () => (await logTail(sim.logFile, 1000)).includes('watching vLLM pods'));
    const addNodes = async (pool: GpuNodePool) => {
      for (let i = 0; i < pool.nodes; i++) await api.ensure('/api/v1/nodes', gpuNode(pool, i));
      await waitUntilReady(kwok, async () => {
        const nodes = await api.get<{ items: KubeNode[] }>(`/api/v1/nodes?labelSelector=${encodeURIComponent(`${GPU_TYPE_LABEL}=${pool.gpuType}`)}`);
        return nodes.items.filter(isReady).length >= pool.nodes;
      });
    };
    for (const pool of options.nodePools ?? []) await addNodes(pool);
    return { kubeconfig, credentials, api, podCidr: claim.cidr, podLogDir, addNodes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Takes a pod IP range no other cluster on this machine holds: `preferred`, or else a free one picked at random.
 * The claim is a listening socket, so a crashed holder's range is free again.
 */
async function claimPodNetwork(preferred?: number): Promise<{ cidr: string; server: Server }> {
  const { first, last } = POD_NETWORKS;
  if (preferred !== undefined && !(Number.isInteger(preferred) && preferred >= first && preferred <= last)) {
    throw new Error(`podNetwork must be an integer from ${first} to ${last} (pod IPs 127.N.0.0/16), not ${preferred}`);
  }
  const listen = (n: number) => new Promise<Server | undefined>((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(undefined) : reject(error)));
    server.listen({ host: `127.${n}.0.0`, port: POD_NETWORK_CLAIM_PORT }, () => resolve(server));
  });
  // A free pick leaves npm start's range alone, so a test run never keeps `npm start` from starting.
  const candidates = preferred !== undefined ? [preferred] : shuffled(first, last).filter((n) => n !== KEPT_CLUSTER_POD_NETWORK);
  for (const n of candidates) {
    const server = await listen(n);
    if (server) return { cidr: `127.${n}.0.0/16`, server };
  }
  throw new Error(preferred !== undefined
    ? `pod IP range 127.${preferred}.0.0/16 is held by another local cluster (is another \`npm start\` running?): stop it, or set KILN_GPU_CLUSTER_POD_NETWORK to another N from ${first + 1} to ${last}`
    : `every pod IP range 127.${first + 1}-${last}.0.0/16 is held by another local cluster`);
}

function shuffled(first: number, last: number): number[] {
  const all = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  for (let i = all.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return all;
}

/**
 * A cluster kept from before pod IPs were loopback addresses: its nodes still name 10.240.0.1 and its pods
 * 10.244.x.x, where nothing may be sent. Nodes are given their loopback address and kubelet port, and pods
 * outside the range are deleted (their Deployments replace them with pods in the range).
 */
async function moveToLoopback(api: KubeApi, podCidr: string, kubeletPort: number): Promise<void> {
  const prefix = podCidr.split('.').slice(0, 2).join('.') + '.';
  const nodes = await api.get<{ items: { metadata: { name: string }; status?: { addresses?: { type: string; address: string }[] } }[] }>('/api/v1/nodes');
  for (const node of nodes.items) {
    if (node.status?.addresses?.every((a) => a.type !== 'InternalIP' || a.address === NODE_IP)) continue;
    await api.request('PATCH', `/api/v1/nodes/${node.metadata.name}/status`, {
      status: {
        addresses: [{ type: 'InternalIP', address: NODE_IP }, { type: 'Hostname', address: node.metadata.name }],
        daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } },
      },
    }, 'application/merge-patch+json');
  }
  const pods = await api.get<{ items: { metadata: { name: string; namespace: string }; status?: { podIP?: string } }[] }>('/api/v1/pods');
  for (const pod of pods.items) {
    if (!pod.status?.podIP || pod.status.podIP.startsWith(prefix)) continue;
    await api.request('DELETE', `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`).catch((e: unknown) => {
      if (!(e instanceof KubeApiError && e.status === 404)) throw e;
    });
  }
}

interface KubeNode { spec?: { taints?: { key: string }[] }; status?: { conditions?: { type: string; status: string }[] } }
// Ready, and the node lifecycle controller has lifted the taints it put on while the node was not: until then the
// scheduler still refuses the node, and the taint list a caller reads is not the node's own.
const LIFECYCLE_TAINTS = new Set(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);
const isReady = (node: KubeNode) =>
  (node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false)
  && !(node.spec?.taints ?? []).some((taint) => LIFECYCLE_TAINTS.has(taint.key));

/** Node `gpu-<type>-<index>`: the shape LocalGpuPool declares too; kwok gives it capacity from its labels. */
function gpuNode(pool: GpuNodePool, index: number) {
  return { apiVersion: 'v1', kind: 'Node', ...simulatedGpuNode(`gpu-${pool.gpuType}`, index, pool.gpuType, pool.gpusPerNode) };
}

/** Service-account signing keys and the admin token, made once and kept with the cluster's data. */
async function ensureSecrets(dir: string): Promise<{ token: string }> {
  const pki = join(dir, 'pki');
  if (!existsSync(join(pki, 'sa.key'))) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    await writeFile(join(pki, 'sa.key'), privateKey, { mode: 0o600 });
    await writeFile(join(pki, 'sa.pub'), publicKey);
  }
  const tokens = join(dir, 'tokens.csv');
  if (!existsSync(tokens)) await writeFile(tokens, `${randomBytes(24).toString('hex')},kiln-admin,kiln-admin,system:masters\n`, { mode: 0o600 });
  return { token: (await readFile(tokens, 'utf8')).split(',')[0]! };
}

function kubeconfigYaml(credentials: KubeCredentials): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'kiln-local',
    clusters: [{ name: 'kiln-local', cluster: { server: credentials.server, 'certificate-authority-data': Buffer.from(credentials.ca).toString('base64') } }],
    users: [{ name: 'kiln-admin', user: { token: credentials.token } }],
    contexts: [{ name: 'kiln-local', context: { cluster: 'kiln-local', user: 'kiln-admin' } }],
  });
}
