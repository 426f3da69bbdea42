// KilnOnKubernetes run by the real Pulumi engine (Automation API, inline program, file backend) through the real
// Kubernetes provider plugin against Kiln's local cluster, on two kwok CPU nodes added for it (Kiln's pods do not
// tolerate the GPU nodes' taint, as on a real cluster). kwok plays the kubelet: the pods turn Ready without running
// Kiln's image, so what is asserted is what the API server accepted and what an operator would read back with
// kubectl: the Deployments and their pods, probes, Services, disruption budgets, the Secret, and how the objects
// change on an update, a rotated secret and a destroy.
import test from 'ava';
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import type { Stack, UpResult } from '@pulumi/pulumi/automation/index.js';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { KilnOnKubernetes, type KilnOnKubernetesArgs } from '../../stacks/kiln-on-kubernetes/index.ts';
import { openStack, type PulumiSettings } from '../../workflows/pulumi/automation.ts';
import { eventually } from '../support/eventually.ts';
import { startStackTestCluster } from '../support/gpu-cluster.ts';
import { readStateFiles } from '../support/pulumi.ts';

let cluster: GpuCluster;
let kubeconfig: string;
let settings: PulumiSettings;

const NS = 'kiln-system';
const CPU_NODES = ['cpu-0', 'cpu-1'];

test.before(async () => {
  ({ cluster, kubeconfig, settings } = await startStackTestCluster('kiln-on-kubernetes'));
  await cluster.api.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  for (const name of CPU_NODES) await cluster.api.ensure('/api/v1/nodes', cpuNode(name));
  await eventually('the CPU nodes Ready', async () => {
    const nodes = await cluster.api.get<{ items: Node[] }>('/api/v1/nodes?labelSelector=kiln.test%2Fpool%3Dcpu');
    return nodes.items.length === CPU_NODES.length && nodes.items.every(isSchedulable);
  });
});
test.after.always(() => cluster?.stop());

/** A machine without GPUs, as Kiln's own processes run on: kwok manages it (the annotation) and turns it Ready. */
function cpuNode(name: string) {
  const resources = { cpu: '16', memory: '64Gi', pods: '110' };
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok', 'kiln.test/pool': 'cpu' },
    },
    status: { allocatable: resources, capacity: resources },
  };
}
interface Node { spec?: { taints?: { key: string }[] }; status?: { conditions?: { type: string; status: string }[] } }
const isSchedulable = (n: Node) => (n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false) && !(n.spec?.taints?.length);

const SECRETS = {
  databaseUrl: 'postgres://kiln:db-password-Xq81@postgres.example.internal:5432/kiln',
  signingKey: 'signing-key-0123456789abcdefghijklmnopqrstuv',
  pulumiPassphrase: 'passphrase-Zr7Hk2',
  metricsToken: 'metrics-token-0123456789abcdefghijklmnopq',
  smtpUrl: 'smtp://mailer:mail-password-Wm3@smtp.example.internal:587',
  stripe: 'sk_live_stripeKeyForTheTest0000',
};

const args = (replicas: KilnOnKubernetesArgs['replicas'], signingKey = SECRETS.signingKey): KilnOnKubernetesArgs => ({
  image: 'registry.example.com/kiln:0.1.0',
  namespace: NS,
  replicas,
  databaseUrl: pulumi.secret(SECRETS.databaseUrl),
  temporalAddress: 'temporal-frontend.temporal.svc.cluster.local:7233',
  signingKey: pulumi.secret(signingKey),
  pulumiPassphrase: pulumi.secret(SECRETS.pulumiPassphrase),
  metricsToken: pulumi.secret(SECRETS.metricsToken),
  smtpUrl: pulumi.secret(SECRETS.smtpUrl),
  env: { KILN_PUBLIC_URL: 'https://kiln.example.com', KILN_TRUST_PROXY: 'true' },
  secretEnv: { STRIPE_SECRET_KEY: pulumi.secret(SECRETS.stripe) },
});

async function stackOf(a: KilnOnKubernetesArgs): Promise<Stack> {
  return openStack(settings, {
    project: 'kiln-on-kubernetes',
    stackName: 'prod',
    program: async () => {
      const kiln = new KilnOnKubernetes('kiln', a, { provider: new k8s.Provider('cluster', { kubeconfig }) });
      return { apiUrl: kiln.apiUrl, gatewayUrl: kiln.gatewayUrl, apiServiceName: kiln.apiServiceName, secretName: kiln.secretName, deploymentNames: kiln.deploymentNames };
    },
  });
}
/** The up's result, and each object it changed as `<op> <type> <name>` (the component's own record too). */
async function up(a: KilnOnKubernetesArgs): Promise<UpResult & { changed: string[] }> {
  const changed: string[] = [];
  const result = await (await stackOf(a)).up({
    onEvent: (event) => {
      const step = event.resOutputsEvent?.metadata;
      if (step && step.op !== 'same') changed.push(`${step.op} ${step.type} ${step.urn.split('::').pop()}`);
    },
  });
  if (result.summary.result !== 'succeeded') throw new Error(`up: ${result.summary.result}`);
  return { ...result, changed: changed.sort() };
}

interface Container {
  name: string;
  command: string[];
  ports?: { name: string; containerPort: number }[];
  env: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[];
  readinessProbe?: { httpGet: { path: string; port: string } };
  livenessProbe?: { httpGet: { path: string; port: string } };
  startupProbe?: { httpGet: { path: string; port: string } };
}
interface Deployment {
  metadata: { uid: string; generation: number };
  spec: { replicas: number; strategy: { rollingUpdate: { maxUnavailable: number; maxSurge: number } }; template: { spec: { containers: Container[] } } };
  status: { readyReplicas?: number; updatedReplicas?: number };
}
interface Pod { metadata: { name: string; labels: Record<string, string> }; spec: { nodeName?: string; containers: Container[] }; status: { conditions?: { type: string; status: string }[] } }
const deployment = (process: string) => cluster.api.get<Deployment>(`/apis/apps/v1/namespaces/${NS}/deployments/kiln-${process}`);
const pods = async () => (await cluster.api.get<{ items: Pod[] }>(`/api/v1/namespaces/${NS}/pods`)).items;
const isReady = (p: Pod) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const envOf = (c: Container) => Object.fromEntries(c.env.map((e) => [e.name, e.value ?? e.valueFrom]));

test.serial('up runs each process with the replicas asked, on the CPU nodes; probes on the health routes; Services select one process\'s pods; a budget per process', async (t) => {
  const result = await up(args({ api: 2, worker: 3, gateway: 2 }));
  t.is(result.outputs.apiUrl!.value, `http://kiln-api.${NS}.svc.cluster.local`);
  t.is(result.outputs.gatewayUrl!.value, `http://kiln-gateway.${NS}.svc.cluster.local`);
  t.deepEqual(result.outputs.deploymentNames!.value, { api: 'kiln-api', worker: 'kiln-worker', gateway: 'kiln-gateway' });

  // The up waited for the rollouts: every replica is Ready when it returns.
  for (const [process, replicas] of [['api', 2], ['worker', 3], ['gateway', 2]] as const) {
    const d = await deployment(process);
    t.is(d.spec.replicas, replicas, process);
    t.is(d.status.readyReplicas, replicas, `${process} Ready`);
  }
  const all = await pods();
  t.is(all.filter(isReady).length, 7);
  t.true(all.every((p) => CPU_NODES.includes(p.spec.nodeName ?? '')), 'no pod on a GPU node');

  // A rollout never takes a serving pod away before its replacement is Ready.
  for (const process of ['api', 'gateway']) t.like((await deployment(process)).spec.strategy.rollingUpdate, { maxUnavailable: 0, maxSurge: 1 });

  const [api] = (await deployment('api')).spec.template.spec.containers;
  t.deepEqual(api!.command, ['node', 'control-plane/main.ts']);
  t.deepEqual(api!.ports, [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
  t.like(envOf(api!), { PORT: '8080', KILN_ENV: 'production', TEMPORAL_ADDRESS: 'temporal-frontend.temporal.svc.cluster.local:7233', KILN_PUBLIC_URL: 'https://kiln.example.com' });
  t.like(api!.readinessProbe, { httpGet: { path: '/v1/health/ready', port: 'http' } });
  t.like(api!.livenessProbe, { httpGet: { path: '/v1/health/live', port: 'http' } });
  t.like(api!.startupProbe, { httpGet: { path: '/v1/health/live', port: 'http' } });
  const [gateway] = (await deployment('gateway')).spec.template.spec.containers;
  t.deepEqual(gateway!.command, ['node', 'gateway/main.ts']);
  t.like(envOf(gateway!), { KILN_GATEWAY_PORT: '8081' });
  t.deepEqual(gateway!.ports, [{ name: 'http', containerPort: 8081, protocol: 'TCP' }]);
  t.like(gateway!.readinessProbe, { httpGet: { path: '/v1/health/ready', port: 'http' } });
  t.like(gateway!.livenessProbe, { httpGet: { path: '/v1/health/live', port: 'http' } });
  // The worker has no HTTP health route; with the metrics token it listens for scrapers.
  const [worker] = (await deployment('worker')).spec.template.spec.containers;
  t.deepEqual(worker!.command, ['node', 'workflows/worker.ts']);
  t.is(worker!.readinessProbe, undefined);
  t.is(worker!.livenessProbe, undefined);
  t.deepEqual(worker!.ports, [{ name: 'metrics', containerPort: 9464, protocol: 'TCP' }]);

  // Each Service's selector, matched against every pod of the namespace, picks that process's pods alone, on a port they name.
  for (const [process, port] of [['api', 8080], ['gateway', 8081]] as const) {
    const service = await cluster.api.get<{ spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] } }>(`/api/v1/namespaces/${NS}/services/kiln-${process}`);
    const selected = all.filter((p) => Object.entries(service.spec.selector).every(([k, v]) => p.metadata.labels[k] === v));
    t.is(selected.length, 2, `${process}'s Service selects its 2 pods`);
    t.true(selected.every((p) => p.metadata.name.startsWith(`kiln-${process}-`)));
    t.like(service.spec.ports[0], { port: 80, targetPort: 'http' });
    t.true(selected.every((p) => p.spec.containers[0]!.ports?.some((c) => c.name === 'http' && c.containerPort === port)));
  }
  await t.throwsAsync(cluster.api.get(`/api/v1/namespaces/${NS}/services/kiln-worker`), undefined, 'no Service for the worker');

  for (const [process, replicas] of [['api', 2], ['worker', 3], ['gateway', 2]] as const) {
    const status = await eventually(`${process}'s budget status`, async () => {
      const b = await cluster.api.get<{ status?: { expectedPods?: number; currentHealthy?: number; disruptionsAllowed?: number } }>(`/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/kiln-${process}`);
      return b.status?.expectedPods === replicas && b.status.currentHealthy === replicas ? b.status : undefined;
    });
    t.is(status.disruptionsAllowed, 1, process);
  }
});

test.serial('the Secret holds every secret setting; containers read them by reference, each only those it needs, and neither the pods nor the state hold a value in clear', async (t) => {
  const secretName = (await (await stackOf(args({ api: 2, worker: 3, gateway: 2 }))).outputs()).secretName!.value as string;
  t.regex(secretName, /^kiln-secrets-[0-9a-z]+$/);
  const secret = await cluster.api.get<{ data: Record<string, string> }>(`/api/v1/namespaces/${NS}/secrets/${secretName}`);
  const decoded = Object.fromEntries(Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  t.deepEqual(decoded, {
    DATABASE_URL: SECRETS.databaseUrl, KILN_SIGNING_KEY: SECRETS.signingKey, PULUMI_CONFIG_PASSPHRASE: SECRETS.pulumiPassphrase,
    KILN_METRICS_TOKEN: SECRETS.metricsToken, SMTP_URL: SECRETS.smtpUrl, STRIPE_SECRET_KEY: SECRETS.stripe,
  });

  const referenced = (c: Container) => c.env.filter((e) => e.valueFrom).map((e) => {
    t.is(e.valueFrom!.secretKeyRef.name, secretName);
    t.is(e.valueFrom!.secretKeyRef.key, e.name);
    return e.name;
  }).sort();
  const containerOf = async (process: string) => (await deployment(process)).spec.template.spec.containers[0]!;
  t.deepEqual(referenced(await containerOf('api')), ['DATABASE_URL', 'KILN_METRICS_TOKEN', 'KILN_SIGNING_KEY', 'SMTP_URL', 'STRIPE_SECRET_KEY']);
  t.deepEqual(referenced(await containerOf('worker')), ['DATABASE_URL', 'KILN_METRICS_TOKEN', 'KILN_SIGNING_KEY', 'PULUMI_CONFIG_PASSPHRASE', 'STRIPE_SECRET_KEY']);
  t.deepEqual(referenced(await containerOf('gateway')), ['DATABASE_URL', 'KILN_METRICS_TOKEN', 'KILN_SIGNING_KEY', 'STRIPE_SECRET_KEY']);

  const clear = JSON.stringify([await cluster.api.get(`/apis/apps/v1/namespaces/${NS}/deployments`), await pods()]) + await readStateFiles(settings);
  for (const value of Object.values(SECRETS)) {
    t.false(clear.includes(value), 'a value in clear');
    t.false(clear.includes(Buffer.from(value).toString('base64')), 'a value in base64');
  }
});

test.serial('a change of replicas is applied in place: the same two Deployments, scaled, and no other object touched', async (t) => {
  const before = { api: await deployment('api'), worker: await deployment('worker') };
  const result = await up(args({ api: 3, worker: 1, gateway: 2 }));
  t.deepEqual(result.changed, ['update kiln:stacks:KilnOnKubernetes kiln', 'update kubernetes:apps/v1:Deployment kiln-api', 'update kubernetes:apps/v1:Deployment kiln-worker']);
  const api = await deployment('api');
  const worker = await deployment('worker');
  t.is(api.metadata.uid, before.api.metadata.uid);
  t.is(worker.metadata.uid, before.worker.metadata.uid);
  t.is(api.spec.replicas, 3);
  t.is(api.status.readyReplicas, 3);
  t.is(worker.spec.replicas, 1);
  await eventually('one worker pod left', async () => (await pods()).filter((p) => p.metadata.labels['app.kubernetes.io/component'] === 'worker').length === 1);
});

test.serial('a rotated signing key is a new Secret, which every process rolls onto; the old one goes', async (t) => {
  const stack = await stackOf(args({ api: 3, worker: 1, gateway: 2 }));
  const oldSecret = (await stack.outputs()).secretName!.value as string;
  const generations = { api: (await deployment('api')).metadata.generation, gateway: (await deployment('gateway')).metadata.generation };

  const rotated = 'signing-key-rotated-ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const result = await up(args({ api: 3, worker: 1, gateway: 2 }, rotated));
  const newSecret = result.outputs.secretName!.value as string;
  t.not(newSecret, oldSecret);
  const secret = await cluster.api.get<{ data: Record<string, string> }>(`/api/v1/namespaces/${NS}/secrets/${newSecret}`);
  t.is(Buffer.from(secret.data.KILN_SIGNING_KEY!, 'base64').toString(), rotated);
  await t.throwsAsync(cluster.api.get(`/api/v1/namespaces/${NS}/secrets/${oldSecret}`), undefined, 'the old Secret is deleted');

  for (const process of ['api', 'gateway'] as const) {
    const d = await deployment(process);
    t.true(d.metadata.generation > generations[process], `${process}'s pod template changed: its pods roll`);
    t.true(d.spec.template.spec.containers[0]!.env.filter((e) => e.valueFrom).every((e) => e.valueFrom!.secretKeyRef.name === newSecret));
    t.is(d.status.updatedReplicas, d.spec.replicas, `${process} rolled out`);
  }
});

test.serial('destroy removes every object it made', async (t) => {
  const stack = await stackOf(args({ api: 3, worker: 1, gateway: 2 }));
  t.is((await stack.destroy()).summary.result, 'succeeded');
  const selector = encodeURIComponent('app.kubernetes.io/instance=kiln');
  for (const path of [`/apis/apps/v1/namespaces/${NS}/deployments`, `/api/v1/namespaces/${NS}/services`, `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, `/api/v1/namespaces/${NS}/secrets`]) {
    t.deepEqual((await cluster.api.get<{ items: unknown[] }>(`${path}?labelSelector=${selector}`)).items, [], path);
  }
  await eventually('the pods gone', async () => (await pods()).length === 0);
});
