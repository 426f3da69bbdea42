// How the vLLM deployment loads each kind of model reference: a Hub id's revision as its own flag, a pvc://
// model from its claim mounted read-only, and the model always served under the reference as written (the
// name inference requests carry).
import test from 'ava';
import { vllmModelSource } from '../../catalog/deployment-rules.ts';
import { vllmSpec } from '../../stacks/vllm-deployment/args.ts';
import { mockPulumi } from './mocks.ts';

const mocks = await mockPulumi();
const { VllmDeployment } = await import('../../stacks/vllm-deployment/index.ts');

test('Hub ids: plain ones load as they are; hf:// and a revision become --model, --revision and the served name', (t) => {
  t.deepEqual(vllmModelSource('Qwen/Qwen2.5-7B-Instruct').args, ['--model', 'Qwen/Qwen2.5-7B-Instruct']);
  t.deepEqual(vllmModelSource('hf://Qwen/Qwen2.5-7B-Instruct').args, ['--model', 'Qwen/Qwen2.5-7B-Instruct', '--served-model-name', 'hf://Qwen/Qwen2.5-7B-Instruct']);
  t.deepEqual(vllmModelSource('acme/llama-ft@v2').args, ['--model', 'acme/llama-ft', '--revision', 'v2', '--served-model-name', 'acme/llama-ft@v2']);
  t.deepEqual(vllmModelSource('s3://acme-models/llama').args, ['--model', 's3://acme-models/llama']);
  t.is(vllmModelSource('acme/llama-ft@v2').claim, undefined);
});

test('a pvc:// model is read from its claim, mounted read-only under /models/<claim>', async (t) => {
  const spec = vllmSpec({ name: 'ft', model: 'pvc://model-store/qwen/7b-ft', gpuType: 'nvidia-l4', gpusPerReplica: 1, replicas: 1 });
  t.deepEqual(spec.modelClaim, { name: 'model-store', mountPath: '/models/model-store' });
  t.deepEqual(spec.serverArgs.slice(0, 4), ['--model', '/models/model-store/qwen/7b-ft', '--served-model-name', 'pvc://model-store/qwen/7b-ft']);

  new VllmDeployment('ft', { name: 'ft', model: 'pvc://model-store/qwen/7b-ft', gpuType: 'nvidia-l4', gpusPerReplica: 1, replicas: 1 });
  const pod = (await mocks.resource('kubernetes:apps/v1:Deployment', 'ft-deployment')).inputs.spec.template.spec;
  t.deepEqual(pod.volumes.find((v: { name: string }) => v.name === 'model-claim'), { name: 'model-claim', persistentVolumeClaim: { claimName: 'model-store', readOnly: true } });
  t.deepEqual(pod.containers[0].volumeMounts.find((m: { name: string }) => m.name === 'model-claim'), { name: 'model-claim', mountPath: '/models/model-store', readOnly: true });
  // A Hub model mounts no claim.
  t.is(vllmSpec({ name: 'q', model: 'Qwen/Qwen2.5-7B-Instruct', gpuType: 'nvidia-l4', gpusPerReplica: 1, replicas: 1 }).modelClaim, undefined);
});
