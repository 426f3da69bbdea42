import test from 'ava';
import * as pulumi from '@pulumi/pulumi';
import { GPU_RESOURCE, GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import { mockPulumi, valueOf } from './mocks.ts';

const mocks = await mockPulumi();
// Imported after setMocks, so the component registers with the mocks.
const { VllmDeployment } = await import('../../stacks/vllm-deployment/index.ts');

const LLAMA_ARGS = {
  name: 'llama',
  namespace: 'models',
  model: 'meta-llama/Llama-3.1-70B-Instruct',
  gpuType: 'nvidia-h100-80gb',
  gpusPerReplica: 4,
  replicas: 2,
  minReplicas: 1,
  maxReplicas: 5,
  maxModelLen: 8192,
  dtype: 'bfloat16',
  extraArgs: ['--enable-prefix-caching'],
  modelCacheSize: '300Gi',
};
const llama = new VllmDeployment('llama', LLAMA_ARGS);

const deployment = async () => (await mocks.resource('kubernetes:apps/v1:Deployment', 'llama-deployment')).inputs;
const pod = async () => (await deployment()).spec.template.spec;
const container = async () => (await pod()).containers[0];

test('the vLLM container asks for GPUs per replica and runs that tensor-parallel size on port 8000', async (t) => {
  const c = await container();
  t.is(c.image, 'vllm/vllm-openai:v0.11.0');
  t.deepEqual(c.resources.limits, { [GPU_RESOURCE]: '4' });
  t.deepEqual(c.args, [
    '--model', 'meta-llama/Llama-3.1-70B-Instruct', '--tensor-parallel-size', '4', '--port', '8000',
    '--max-model-len', '8192', '--dtype', 'bfloat16', '--enable-prefix-caching',
  ]);
  t.deepEqual(c.ports, [{ name: 'http', containerPort: 8000 }]);
});

test('pods land only on nodes of the requested GPU type and tolerate the GPU taint', async (t) => {
  const p = await pod();
  t.deepEqual(p.nodeSelector, { [GPU_TYPE_LABEL]: 'nvidia-h100-80gb' });
  t.deepEqual(p.tolerations, [{ key: GPU_TAINT.key, operator: 'Equal', value: GPU_TAINT.value, effect: GPU_TAINT.effect }]);
});

test('readiness, liveness and startup probes ask vLLM /health on port 8000', async (t) => {
  const c = await container();
  for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) t.deepEqual(probe.httpGet, { path: '/health', port: 8000 });
});

test('the model cache is a size-limited emptyDir mounted where Hugging Face caches', async (t) => {
  const p = await pod();
  t.deepEqual(p.volumes.find((v: { name: string }) => v.name === 'model-cache'), { name: 'model-cache', emptyDir: { sizeLimit: '300Gi' } });
  t.true(p.containers[0].volumeMounts.some((m: { name: string; mountPath: string }) => m.name === 'model-cache' && m.mountPath === '/root/.cache/huggingface'));
});

test('the deployment runs the desired replicas in the given namespace and selects its own pods', async (t) => {
  const d = await deployment();
  t.is(d.metadata.name, 'llama');
  t.is(d.metadata.namespace, 'models');
  t.is(d.spec.replicas, 2);
  t.deepEqual(d.spec.selector.matchLabels, d.spec.template.metadata.labels);
});

test('the service maps port 80 to the vLLM port of the same pods', async (t) => {
  const s = (await mocks.resource('kubernetes:core/v1:Service', 'llama-service')).inputs;
  t.deepEqual(s.spec.ports, [{ name: 'http', port: 80, targetPort: 'http' }]);
  t.deepEqual(s.spec.selector, (await deployment()).spec.template.metadata.labels);
});

test('without an autoscaler asked for, none is made: the replica count is the stack runner\'s alone', async (t) => {
  await deployment();
  t.deepEqual(mocks.ofType('kubernetes:autoscaling/v2:HorizontalPodAutoscaler').filter((r) => r.name === 'llama-hpa'), []);
});

test('with horizontalPodAutoscaler the autoscaler owns replicas between the bounds and the Deployment starts at the lower bound', async (t) => {
  new VllmDeployment('scaled', { ...LLAMA_ARGS, name: 'scaled', horizontalPodAutoscaler: true });
  const hpa = (await mocks.resource('kubernetes:autoscaling/v2:HorizontalPodAutoscaler', 'scaled-hpa')).inputs;
  t.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'scaled' });
  t.is(hpa.spec.minReplicas, 1);
  t.is(hpa.spec.maxReplicas, 5);
  t.is(hpa.metadata.annotations['pulumi.com/skipAwait'], 'true');
  const d = (await mocks.resource('kubernetes:apps/v1:Deployment', 'scaled-deployment')).inputs;
  t.is(d.spec.replicas, 1);
});

test('a disruption budget lets one pod of the deployment go at a time', async (t) => {
  const pdb = (await mocks.resource('kubernetes:policy/v1:PodDisruptionBudget', 'llama-pdb')).inputs;
  t.is(pdb.spec.maxUnavailable, 1);
  t.deepEqual(pdb.spec.selector.matchLabels, (await deployment()).spec.template.metadata.labels);
});

test('every object tells the provider not to wait for rollout, to take back fields others changed, and to delete at once', async (t) => {
  const objects = await Promise.all([
    mocks.resource('kubernetes:apps/v1:Deployment', 'llama-deployment'),
    mocks.resource('kubernetes:core/v1:Service', 'llama-service'),
    mocks.resource('kubernetes:policy/v1:PodDisruptionBudget', 'llama-pdb'),
  ]);
  for (const o of objects) {
    t.like(o.inputs.metadata.annotations, { 'pulumi.com/skipAwait': 'true', 'pulumi.com/patchForce': 'true', 'pulumi.com/deletionPropagationPolicy': 'background' }, o.type);
  }
});

test('outputs name the objects and the in-cluster Service URL', async (t) => {
  t.is(await valueOf(llama.serviceUrl), 'http://llama.models.svc.cluster.local');
  t.is(await valueOf(llama.deploymentName), 'llama');
  t.is(await valueOf(llama.serviceName), 'llama');
});

test('defaults: one GPU, one replica, the default namespace and cache size', async (t) => {
  const small = new VllmDeployment('small', { name: 'small', model: 'Qwen/Qwen2.5-0.5B', gpuType: 'nvidia-l4', gpusPerReplica: 1, replicas: 1 });
  const d = (await mocks.resource('kubernetes:apps/v1:Deployment', 'small-deployment')).inputs;
  const c = d.spec.template.spec.containers[0];
  t.deepEqual(c.args, ['--model', 'Qwen/Qwen2.5-0.5B', '--tensor-parallel-size', '1', '--port', '8000']);
  t.deepEqual(c.resources.limits, { [GPU_RESOURCE]: '1' });
  t.is(d.spec.template.spec.volumes[0].emptyDir.sizeLimit, '200Gi');
  t.is(d.spec.replicas, 1);
  t.is(await valueOf(small.serviceUrl), 'http://small.default.svc.cluster.local');
});

test('pod annotations go on the pod template, so changing one rolls the pods', async (t) => {
  new VllmDeployment('annotated', { name: 'annotated', model: 'Qwen/Qwen2.5-0.5B', gpuType: 'nvidia-l4', gpusPerReplica: 1, replicas: 1, podAnnotations: { 'kiln.dev/restarts': '3' } });
  const d = (await mocks.resource('kubernetes:apps/v1:Deployment', 'annotated-deployment')).inputs;
  t.deepEqual(d.spec.template.metadata.annotations, { 'kiln.dev/restarts': '3' });
  t.false('kiln.dev/restarts' in d.metadata.annotations);
});

test('arguments that break a rule fail construction before any object is registered', (t) => {
  t.throws(() => new VllmDeployment('broken', { name: 'broken', model: 'org/m', gpuType: 'nvidia-b300', gpusPerReplica: 1, replicas: 1 }), {
    name: 'StackArgsError',
    message: /unknown GPU type "nvidia-b300"/,
  });
  // Rules are checked even when other arguments are outputs of other resources.
  t.throws(() => new VllmDeployment('late', {
    name: 'late', namespace: pulumi.output('models'), model: 'org/m', gpuType: 'nvidia-l4', gpusPerReplica: 3, replicas: 1,
  }), { name: 'StackArgsError', message: /gpusPerReplica must be a power of two/ });
  t.deepEqual(mocks.ofType('kubernetes:apps/v1:Deployment').filter((r) => r.name.startsWith('broken') || r.name.startsWith('late')), []);
});
