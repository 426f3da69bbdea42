import test from 'ava';
import * as pulumi from '@pulumi/pulumi';
import { StackArgsError } from '../../stacks/args-error.ts';
import { checkDtype, checkExtraArgs, checkGpusPerReplica, checkGpuType, checkMaxModelLen, checkModel, checkName, checkReplicaBounds } from '../../stacks/vllm-deployment/validate.ts';
import { checkKnownArgs, vllmSpec } from '../../stacks/vllm-deployment/args.ts';

const rejects = { instanceOf: StackArgsError };

test('GPU types come from the catalog', (t) => {
  t.is(checkGpuType('nvidia-a10g'), 'nvidia-a10g');
  t.throws(() => checkGpuType('nvidia-b200'), { ...rejects, message: 'unknown GPU type "nvidia-b200"; known types: nvidia-h100-80gb, nvidia-a100-80gb, nvidia-a10g, nvidia-l4, nvidia-t4' });
});

test('GPUs per replica are a power of two up to 8', (t) => {
  for (const gpus of [1, 2, 4, 8]) t.is(checkGpusPerReplica(gpus), gpus);
  for (const gpus of [0, -2, 3, 6, 1.5, 16]) {
    t.throws(() => checkGpusPerReplica(gpus), { ...rejects, message: `gpusPerReplica must be a power of two from 1 to 8, got ${gpus}` });
  }
});

test('replicas lie within bounds (minReplicas may be 0, maxReplicas at least 1), and min is not above max', (t) => {
  t.deepEqual(checkReplicaBounds({ replicas: 2, minReplicas: 1, maxReplicas: 4 }), { replicas: 2, minReplicas: 1, maxReplicas: 4 });
  t.notThrows(() => checkReplicaBounds({ replicas: 3, minReplicas: 3, maxReplicas: 3 }));
  t.throws(() => checkReplicaBounds({ replicas: 2, minReplicas: 3, maxReplicas: 1 }), { ...rejects, message: 'minReplicas (3) is greater than maxReplicas (1)' });
  t.throws(() => checkReplicaBounds({ replicas: 5, minReplicas: 1, maxReplicas: 4 }), { ...rejects, message: 'replicas (5) must lie between minReplicas (1) and maxReplicas (4)' });
  t.throws(() => checkReplicaBounds({ replicas: 1, minReplicas: 2, maxReplicas: 4 }), { ...rejects, message: /replicas \(1\) must lie between/ });
  t.notThrows(() => checkReplicaBounds({ replicas: 0, minReplicas: 0, maxReplicas: 4 }), 'scaled to zero');
  t.throws(() => checkReplicaBounds({ replicas: 1, minReplicas: -1, maxReplicas: 4 }), { ...rejects, message: 'minReplicas must be a whole number of at least 0, got -1' });
  t.throws(() => checkReplicaBounds({ replicas: 0, minReplicas: 0, maxReplicas: 0 }), { ...rejects, message: 'maxReplicas must be at least 1, got 0' });
  t.throws(() => checkReplicaBounds({ replicas: 1.5, minReplicas: 1, maxReplicas: 4 }), { ...rejects, message: /^replicas must be a whole number/ });
  // The API's cap (catalog/deployment-rules.ts) holds for the stack too.
  t.notThrows(() => checkReplicaBounds({ replicas: 100, minReplicas: 1, maxReplicas: 100 }));
  t.throws(() => checkReplicaBounds({ replicas: 1, minReplicas: 1, maxReplicas: 101 }), { ...rejects, message: 'maxReplicas must be at most 100, got 101' });
});

test('context length, dtype and extra vLLM arguments follow the rules the API applies', (t) => {
  t.is(checkMaxModelLen(4096), 4096);
  for (const tokens of [0, 1.5, 10_000_001]) t.throws(() => checkMaxModelLen(tokens), { ...rejects, message: /^maxModelLen must be a whole number of tokens/ });
  t.is(checkDtype('bfloat16'), 'bfloat16');
  t.throws(() => checkDtype('int4'), { ...rejects, message: 'dtype must be one of auto, bfloat16, float16, float32, got "int4"' });
  t.deepEqual(checkExtraArgs(['--enable-prefix-caching', '--max-num-seqs=64']), ['--enable-prefix-caching', '--max-num-seqs=64']);
  // Flags Kiln derives from the deployment's own fields cannot be given twice, in either spelling.
  t.throws(() => checkExtraArgs(['--tensor-parallel-size', '2']), { ...rejects, message: "extraArgs: --tensor-parallel-size is set by Kiln from the deployment's own fields" });
  t.throws(() => checkExtraArgs(['--max-model-len=8192']), { ...rejects, message: /--max-model-len is set by Kiln/ });
  t.throws(() => checkExtraArgs(['--chat-template', 'two words']), { ...rejects, message: /without white space, got "two words"/ });
});

test('names are DNS labels, models are single ids', (t) => {
  t.is(checkName('llama-3-70b'), 'llama-3-70b');
  for (const name of ['', 'Llama', '3llama', 'llama-', 'dep_123', 'a'.repeat(64)]) t.throws(() => checkName(name), { ...rejects, message: /must be a DNS label/ });
  t.is(checkModel('meta-llama/Llama-3.1-8B-Instruct'), 'meta-llama/Llama-3.1-8B-Instruct');
  for (const model of ['', 'two words']) t.throws(() => checkModel(model), { ...rejects, message: /must be a non-empty id/ });
  // The references the API accepts, and only those (catalog/deployment-rules.ts).
  for (const model of ['hf://Qwen/Qwen2.5-7B', 's3://models/llama/8b', 'gs://bucket/weights']) t.is(checkModel(model), model);
  for (const model of ['m', 'ftp://host/model', `org/${'m'.repeat(252)}`]) t.throws(() => checkModel(model), { ...rejects, message: /Kiln can load/ });
});

test('the spec applies defaults and checks every rule', (t) => {
  const base = { name: 'm', model: 'org/model', gpuType: 'nvidia-t4', gpusPerReplica: 2, replicas: 3 };
  t.like(vllmSpec(base), { namespace: 'default', minReplicas: 3, maxReplicas: 3, image: 'vllm/vllm-openai:v0.11.0', modelCacheSize: '200Gi' });
  t.throws(() => vllmSpec({ ...base, minReplicas: 1, maxReplicas: 2 }), { ...rejects, message: /replicas \(3\) must lie between/ });
  t.throws(() => vllmSpec({ ...base, gpusPerReplica: 3 }), rejects);
  // Kiln scales to zero itself; Kubernetes' autoscaler cannot.
  t.like(vllmSpec({ ...base, replicas: 0, minReplicas: 0, maxReplicas: 2 }), { replicas: 0, minReplicas: 0 });
  t.throws(() => vllmSpec({ ...base, replicas: 1, minReplicas: 0, maxReplicas: 2, horizontalPodAutoscaler: true }),
    { ...rejects, message: 'minReplicas must be at least 1 with horizontalPodAutoscaler (it cannot scale to zero)' });
  t.throws(() => vllmSpec({ ...base, gpuType: 'amd-mi300x' }), rejects);
  t.throws(() => vllmSpec({ ...base, name: 'Bad' }), rejects);
});

test('rules whose arguments are still outputs wait for them; the others are checked at once', (t) => {
  const base = { name: 'm', model: 'org/model', gpuType: 'nvidia-t4', gpusPerReplica: 2, replicas: 3 };
  t.notThrows(() => checkKnownArgs({ ...base, maxReplicas: pulumi.output(2) }));
  t.throws(() => checkKnownArgs({ ...base, maxReplicas: 2 }), { ...rejects, message: 'minReplicas (3) is greater than maxReplicas (2)' });
  t.throws(() => checkKnownArgs({ ...base, replicas: pulumi.output(3), gpuType: 'nvidia-x' }), { ...rejects, message: /unknown GPU type "nvidia-x"/ });
  t.throws(() => checkKnownArgs({ ...base, name: pulumi.output('ok'), model: 'a b' }), { ...rejects, message: /model "a b"/ });
});
