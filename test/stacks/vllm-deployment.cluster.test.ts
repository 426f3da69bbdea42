// VllmDeployment run by the real Pulumi engine (Automation API, inline programs, file backend) through
// the real Kubernetes provider plugin against Kiln's local GPU cluster (a real API server and
// scheduler, kwok nodes): the API server accepts the objects, pods land on nodes of the GPU type, the
// disruption budget counts them and the Service selects exactly the Ready ones. Pods have loopback IPs here,
// which Kubernetes keeps out of EndpointSlices, so instead of the Service's endpoints the test calls each
// Ready pod's simulated vLLM server on its own address. Then what the real provider's server-side apply means for
// the autoscaler option and for secrets.
import test from 'ava';
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { VllmDeployment, type VllmDeploymentArgs } from '../../stacks/vllm-deployment/index.ts';
import { openStack, type PulumiSettings } from '../../workflows/pulumi/automation.ts';
import { eventually } from '../support/eventually.ts';
import { startStackTestCluster } from '../support/gpu-cluster.ts';
import { readStateFiles } from '../support/pulumi.ts';

let cluster: GpuCluster;
let kubeconfig: string;
let settings: PulumiSettings;

test.before(async () => {
  ({ cluster, kubeconfig, settings } = await startStackTestCluster('kiln-vllm-cluster'));
  // The namespace is not the component's (Kiln makes each organization's before its stacks run).
  await cluster.api.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'models' } });
});
test.after.always(() => cluster?.stop());

/** `pulumi up` of a stack whose program is the component alone, on the local cluster; answers with its Service URL. */
async function up(args: VllmDeploymentArgs & { readonly name: string }): Promise<string> {
  const stack = await openStack(settings, {
    project: 'vllm-cluster',
    stackName: args.name,
    program: async () => {
      const provider = new k8s.Provider('cluster', { kubeconfig });
      const vllm = new VllmDeployment(args.name, args, { provider });
      return { serviceUrl: vllm.serviceUrl };
    },
  });
  const result = await stack.up();
  if (result.summary.result !== 'succeeded') throw new Error(`up: ${result.summary.result}`);
  return result.outputs.serviceUrl!.value as string;
}

interface Pod {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status: { podIP?: string; conditions?: { type: string; status: string; reason?: string }[] };
}
const isReady = (p: Pod) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const isUnschedulable = (p: Pod) => p.status.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable') ?? false;
const allPods = async () => (await cluster.api.get<{ items: Pod[] }>('/api/v1/namespaces/models/pods')).items;
const podsOf = async (name: string) => (await cluster.api.get<{ items: Pod[] }>(
  `/api/v1/namespaces/models/pods?labelSelector=${encodeURIComponent(`app.kubernetes.io/instance=${name}`)}`)).items;
const readyPods = async (name: string) => (await podsOf(name)).filter(isReady);

/** The model ids the pod's server lists; only ever a loopback address is called. */
async function servedModels(pod: Pod): Promise<string[] | undefined> {
  const ip = pod.status.podIP ?? '';
  if (!ip.startsWith('127.')) throw new Error(`pod ${pod.metadata.name} has a non-loopback IP ${ip}`);
  const res = await fetch(`http://${ip}:8000/v1/models`).catch(() => undefined);
  if (!res?.ok) return undefined;
  return ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id);
}

test.serial('one-GPU replicas land on the L4 nodes, one per node; the Service selects exactly the Ready pods, each serving the model; the budget counts them', async (t) => {
  const model = 'Qwen/Qwen2.5-7B-Instruct';
  const serviceUrl = await up({ name: 'small', namespace: 'models', model, gpuType: 'nvidia-l4', gpusPerReplica: 1, replicas: 2 });
  t.is(serviceUrl, 'http://small.models.svc.cluster.local');
  const pods = await eventually('two Ready pods', async () => { const ready = await readyPods('small'); return ready.length === 2 ? ready : undefined; });
  t.deepEqual(pods.map((p) => p.spec.nodeName ?? '').sort(), ['gpu-nvidia-l4-0', 'gpu-nvidia-l4-1']);

  // The Service's selector, matched against every pod's labels in the namespace, picks out the Ready pods.
  const service = await cluster.api.get<{ spec: { selector: Record<string, string> } }>('/api/v1/namespaces/models/services/small');
  t.deepEqual(service.spec.selector, { 'app.kubernetes.io/name': 'vllm', 'app.kubernetes.io/instance': 'small' });
  const selected = (await allPods()).filter((p) => Object.entries(service.spec.selector).every(([k, v]) => p.metadata.labels?.[k] === v));
  t.deepEqual(selected.map((p) => p.metadata.name).sort(), pods.map((p) => p.metadata.name).sort());

  // What the Service would route to: each Ready pod's vLLM server, on its loopback pod IP.
  for (const pod of pods) {
    t.regex(pod.status.podIP ?? '', /^127\.\d+\.\d+\.\d+$/);
    t.deepEqual(await eventually(`${pod.metadata.name}'s server to answer`, () => servedModels(pod)), [model]);
  }

  const pdb = await eventually('the budget status', async () => {
    const b = await cluster.api.get<{ status?: { expectedPods?: number; currentHealthy?: number; disruptionsAllowed?: number } }>('/apis/policy/v1/namespaces/models/poddisruptionbudgets/small');
    return b.status?.expectedPods === 2 && b.status.currentHealthy === 2 ? b.status : undefined;
  });
  t.is(pdb.disruptionsAllowed, 1);
});

test.serial('four-GPU replicas share the 8-GPU H100 node; a third finds no room', async (t) => {
  const model = 'meta-llama/Llama-3.1-70B-Instruct';
  await up({ name: 'big', namespace: 'models', model, gpuType: 'nvidia-h100-80gb', gpusPerReplica: 4, replicas: 3 });
  const pods = await eventually('two Ready pods and one unschedulable', async () => {
    const all = await podsOf('big');
    return all.filter(isReady).length === 2 && all.filter(isUnschedulable).length === 1 ? all : undefined;
  });
  const ready = pods.filter(isReady);
  t.deepEqual(ready.map((p) => p.spec.nodeName), ['gpu-nvidia-h100-80gb-0', 'gpu-nvidia-h100-80gb-0']);
  const deployment = await cluster.api.get<{ spec: { template: { spec: { nodeSelector: Record<string, string> } } } }>('/apis/apps/v1/namespaces/models/deployments/big');
  t.deepEqual(deployment.spec.template.spec.nodeSelector, { [GPU_TYPE_LABEL]: 'nvidia-h100-80gb' });
  for (const pod of ready) t.deepEqual(await eventually(`${pod.metadata.name}'s server to answer`, () => servedModels(pod)), [model]);
});

interface DeploymentObject { metadata: { generation: number }; spec: { replicas: number; template: { metadata: { annotations?: Record<string, string> }; spec: { containers: { args: string[] }[] } } } }
const deploymentOf = (name: string) => cluster.api.get<DeploymentObject>(`/apis/apps/v1/namespaces/models/deployments/${name}`);

test.serial('with the Kubernetes autoscaler on, neither it nor Kiln undoes the other\'s replica count; switching it on keeps the replicas that run', async (t) => {
  const base = { name: 'elastic', namespace: 'models', model: 'Qwen/Qwen2.5-7B-Instruct', gpuType: 'nvidia-l4', gpusPerReplica: 1, replicas: 3, minReplicas: 1, maxReplicas: 5 };
  await up(base);
  t.is((await deploymentOf('elastic')).spec.replicas, 3);

  // Switched on, the autoscaler starts from the 3 replicas that run, not from minReplicas or Kubernetes' default of 1.
  await up({ ...base, horizontalPodAutoscaler: true });
  t.is((await deploymentOf('elastic')).spec.replicas, 3);
  t.truthy(await cluster.api.get('/apis/autoscaling/v2/namespaces/models/horizontalpodautoscalers/elastic'));

  // The autoscaler scales as the HPA controller does (the scale subresource, under its own field manager)...
  await cluster.api.request('PATCH', '/apis/apps/v1/namespaces/models/deployments/elastic/scale?fieldManager=horizontal-pod-autoscaler', { spec: { replicas: 4 } }, 'application/merge-patch+json');
  // ...and Kiln's next change to the deployment rolls out without a conflict and without touching that count.
  await up({ ...base, horizontalPodAutoscaler: true, extraArgs: ['--enable-prefix-caching'] });
  const after = await deploymentOf('elastic');
  t.is(after.spec.replicas, 4);
  t.true(after.spec.template.spec.containers[0]!.args.includes('--enable-prefix-caching'));
});

test.serial('secrets: the values are encrypted in the stack state, and a rotated secret replaces the Secret\'s value and rolls the pods', async (t) => {
  const args = (token: string, secretId: string) => ({
    name: 'gated', namespace: 'models', model: 'meta-llama/Llama-3.1-8B-Instruct', gpuType: 'nvidia-l4', gpusPerReplica: 1, replicas: 1,
    // What Kiln's deployment program sets: the secrets mounted, by id (workflows/deployment/program.ts).
    podAnnotations: { 'kiln.dev/secrets': `hf=${secretId}` },
    secretEnv: { HF_TOKEN: pulumi.secret(token) },
  });
  const first = 'hf_firstTokenValue000000Aa1';
  const second = 'hf_rotatedTokenValue0000Bb2';
  await up(args(first, 'sec_1'));
  const before = await deploymentOf('gated');
  const secretValue = async () => Buffer.from((await cluster.api.get<{ data: Record<string, string> }>('/api/v1/namespaces/models/secrets/gated-secrets')).data.HF_TOKEN!, 'base64').toString();
  t.is(await secretValue(), first);

  await up(args(second, 'sec_2'));
  t.is(await secretValue(), second);
  const after = await deploymentOf('gated');
  t.true(after.metadata.generation > before.metadata.generation, 'the pod template changed: Kubernetes rolls the pods');
  t.is(after.spec.template.metadata.annotations?.['kiln.dev/secrets'], 'hf=sec_2');

  // No plaintext (nor its base64) anywhere in the state backend.
  const state = await readStateFiles(settings);
  for (const value of [first, second]) {
    t.false(state.includes(value), 'a value in clear');
    t.false(state.includes(Buffer.from(value).toString('base64')), 'a value in base64');
  }
});
