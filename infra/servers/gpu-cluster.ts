// The local GPU cluster: a real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler) whose nodes are kwok-simulated GPU machines. Pods are really scheduled by GPU count,
// type label and taint; kwok then plays the kubelet and turns them Ready after a short delay.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { GPU_RESOURCE, GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import { binaryPath } from '../tools/paths.ts';
import { kubeApi, type KubeApi, type KubeCredentials } from './kube-api.ts';
import { freePort, startProcess, waitUntilReady, type ServerProcess } from './process.ts';
import { kwokConfig } from './kwok-stages.ts';

/** A group of identical simulated GPU machines. */
export interface GpuNodePool {
  readonly gpuType: string;
  readonly nodes: number;
  readonly gpusPerNode: number;
}

/** What `npm start` offers a new user: a small fleet of several GPU types. */
export const DEFAULT_NODE_POOLS: readonly GpuNodePool[] = [
  { gpuType: 'nvidia-h100-80gb', nodes: 4, gpusPerNode: 8 },
  { gpuType: 'nvidia-a100-80gb', nodes: 4, gpusPerNode: 8 },
  { gpuType: 'nvidia-l4', nodes: 8, gpusPerNode: 1 },
];

export interface GpuCluster {
  readonly kubeconfig: string;
  readonly credentials: KubeCredentials;
  readonly api: KubeApi;
  /** Adds simulated GPU nodes (also used to add capacity later). */
  addNodes(pool: GpuNodePool): Promise<void>;
  stop(): Promise<void>;
}

export interface GpuClusterOptions {
  readonly dataDir: string;
  readonly nodePools?: readonly GpuNodePool[];
  /**
   * First of four consecutive loopback ports (etcd client, etcd peer, apiserver, kwok), fixed so a cluster
   * kept in `dataDir` restarts on the addresses it was made with; free ports when absent (tests).
   */
  readonly basePort?: number;
  /** Milliseconds before a scheduled pod turns Ready. */
  readonly podReadyDelayMs?: number;
}

export async function startGpuCluster(options: GpuClusterOptions): Promise<GpuCluster> {
  const dir = join(options.dataDir, 'kube');
  const logs = join(options.dataDir, 'logs');
  const pki = join(dir, 'pki');
  await mkdir(pki, { recursive: true });
  const { token } = await ensureSecrets(dir);
  const started: ServerProcess[] = [];
  const stop = async () => { for (const s of started.reverse()) await s.stop(); };

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

    const kwokConfigFile = join(dir, 'kwok.yaml');
    await writeFile(kwokConfigFile, kwokConfig({ podReadyDelayMs: options.podReadyDelayMs ?? 2000 }));
    const kwok = await startProcess('kwok', binaryPath('kwok'), [
      `--kubeconfig=${kubeconfig}`, `--config=${kwokConfigFile}`,
      '--manage-all-nodes=false', '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      `--server-address=127.0.0.1:${kwokPort}`, '--cidr=10.244.0.1/16', '--node-ip=10.240.0.1',
    ], { logFile: join(logs, 'kwok.log') });
    started.push(kwok);

    // Pods need the `default` service account, which the controller manager creates.
    await waitUntilReady(kwok, async () => !!(await api.get('/api/v1/namespaces/default/serviceaccounts/default')));
    const addNodes = async (pool: GpuNodePool) => {
      for (let i = 0; i < pool.nodes; i++) await api.ensure('/api/v1/nodes', gpuNode(pool, i));
      await waitUntilReady(kwok, async () => {
        const nodes = await api.get<{ items: KubeNode[] }>(`/api/v1/nodes?labelSelector=${encodeURIComponent(`${GPU_TYPE_LABEL}=${pool.gpuType}`)}`);
        return nodes.items.filter(isReady).length >= pool.nodes;
      });
    };
    for (const pool of options.nodePools ?? DEFAULT_NODE_POOLS) await addNodes(pool);
    return { kubeconfig, credentials, api, addNodes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

interface KubeNode { status?: { conditions?: { type: string; status: string }[] } }
const isReady = (node: KubeNode) => node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

function gpuNode(pool: GpuNodePool, index: number) {
  const name = `gpu-${pool.gpuType}-${index}`;
  const resources = { cpu: '96', memory: '1024Gi', pods: '110', [GPU_RESOURCE]: String(pool.gpusPerNode) };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64',
        type: 'kwok', [GPU_TYPE_LABEL]: pool.gpuType, 'nvidia.com/gpu.count': String(pool.gpusPerNode),
      },
    },
    spec: { taints: [GPU_TAINT] },
    status: { allocatable: resources, capacity: resources },
  };
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
