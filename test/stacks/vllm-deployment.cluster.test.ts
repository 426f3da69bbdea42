// The objects VllmDeployment renders, applied to Kiln's local GPU cluster (a real API server and scheduler,
// kwok nodes): the API server accepts them, pods land on nodes of the GPU type, the Service and the
// disruption budget select those pods. Pulumi's Kubernetes provider is not available here, so the test
// applies the inputs the component registered, which are what the provider would send.
import test from 'ava';
import { GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';
import { mockPulumi } from './mocks.ts';
import { eventually } from '../support/eventually.ts';

const mocks = await mockPulumi();
const { VllmDeployment } = await import('../../stacks/vllm-deployment/index.ts');

/** Child name suffix, Pulumi type, API collection. */
const OBJECTS = [
  ['deployment', 'kubernetes:apps/v1:Deployment', '/apis/apps/v1/namespaces/models/deployments'],
  ['service', 'kubernetes:core/v1:Service', '/api/v1/namespaces/models/services'],
  ['pdb', 'kubernetes:policy/v1:PodDisruptionBudget', '/apis/policy/v1/namespaces/models/poddisruptionbudgets'],
] as const;

let cluster: GpuCluster;
test.before(async () => {
  cluster = await startTestGpuCluster();
  await cluster.api.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'models' } });
});
test.after.always(() => cluster?.stop());

async function apply(name: string) {
  for (const [suffix, type, collection] of OBJECTS) {
    await cluster.api.request('POST', collection, (await mocks.resource(type, `${name}-${suffix}`)).inputs);
  }
}


interface Pod { spec: { nodeName?: string }; status: { conditions?: { type: string; status: string; reason?: string }[] } }
const isReady = (p: Pod) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
const isUnschedulable = (p: Pod) => p.status.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable') ?? false;
const podsOf = async (name: string) => (await cluster.api.get<{ items: Pod[] }>(
  `/api/v1/namespaces/models/pods?labelSelector=${encodeURIComponent(`app.kubernetes.io/instance=${name}`)}`)).items;
const readyPods = async (name: string) => (await podsOf(name)).filter(isReady);

test.serial('one-GPU replicas land on the L4 nodes, one per node, and the Service and budget select them', async (t) => {
  new VllmDeployment('small', { name: 'small', namespace: 'models', model: 'Qwen/Qwen2.5-7B-Instruct', gpuType: 'nvidia-l4', gpusPerReplica: 1, replicas: 2 });
  await apply('small');
  const pods = await eventually('two Ready pods', async () => { const ready = await readyPods('small'); return ready.length === 2 ? ready : undefined; });
  const nodes = pods.map((p) => p.spec.nodeName ?? '').sort();
  t.deepEqual(nodes, ['gpu-nvidia-l4-0', 'gpu-nvidia-l4-1']);

  const endpoints = await eventually('the Service endpoints', async () => {
    const slices = await cluster.api.get<{ items: { endpoints?: unknown[] }[] }>(
      `/apis/discovery.k8s.io/v1/namespaces/models/endpointslices?labelSelector=${encodeURIComponent('kubernetes.io/service-name=small')}`);
    const count = slices.items.reduce((n, s) => n + (s.endpoints?.length ?? 0), 0);
    return count === 2 ? count : undefined;
  });
  t.is(endpoints, 2);
  const pdb = await eventually('the budget status', async () => {
    const b = await cluster.api.get<{ status?: { expectedPods?: number; disruptionsAllowed?: number } }>('/apis/policy/v1/namespaces/models/poddisruptionbudgets/small');
    return b.status?.expectedPods === 2 ? b.status : undefined;
  });
  t.is(pdb.disruptionsAllowed, 1);
});

test.serial('four-GPU replicas share the 8-GPU H100 node; a third finds no room', async (t) => {
  new VllmDeployment('big', { name: 'big', namespace: 'models', model: 'meta-llama/Llama-3.1-70B-Instruct', gpuType: 'nvidia-h100-80gb', gpusPerReplica: 4, replicas: 3 });
  await apply('big');
  const pods = await eventually('two Ready pods and one unschedulable', async () => {
    const all = await podsOf('big');
    return all.filter(isReady).length === 2 && all.filter(isUnschedulable).length === 1 ? all : undefined;
  });
  t.deepEqual(pods.filter(isReady).map((p) => p.spec.nodeName), ['gpu-nvidia-h100-80gb-0', 'gpu-nvidia-h100-80gb-0']);
  const deployment = await cluster.api.get<{ spec: { template: { spec: { nodeSelector: Record<string, string> } } } }>('/apis/apps/v1/namespaces/models/deployments/big');
  t.deepEqual(deployment.spec.template.spec.nodeSelector, { [GPU_TYPE_LABEL]: 'nvidia-h100-80gb' });
});
