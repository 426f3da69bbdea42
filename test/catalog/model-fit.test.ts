// The fit arithmetic against published figures: memory for weights and KV cache, the GPUs a replica needs.
import test from 'ava';
import { findGpuType } from '../../catalog/gpu-types.ts';
import { decodeTokensPerSecond, kvBytesPerToken, modelFit, smallestGpuCount } from '../../catalog/model-fit.ts';
import { findCatalogModel } from '../../catalog/models.ts';

const model = (id: string) => findCatalogModel(id)!;
const gpu = (id: string) => findGpuType(id)!;
const llama8b = model('meta-llama/Llama-3.1-8B-Instruct');
const llama70b = model('meta-llama/Llama-3.1-70B-Instruct');
const qwen7b = model('Qwen/Qwen2.5-7B-Instruct');

test('Llama 3.1 8B keeps 128 KiB of KV cache per token in 16 bits (32 layers x 8 KV heads x 128 x K and V x 2 bytes)', (t) => {
  t.is(kvBytesPerToken(llama8b), 128 * 1024);
});

test('an 8B model fits one L4 at a 4k context, not at its full 128k', (t) => {
  const short = modelFit({ model: llama8b, gpu: gpu('nvidia-l4'), gpuCount: 1, contextLength: 4096 });
  t.true(short.fits);
  t.is(short.weightsGb, 14.96); // 8.03e9 parameters x 2 bytes
  t.is(short.kvPerSequenceGb, 0.5);
  t.is(short.maxConcurrentSequences, 10);
  const long = modelFit({ model: llama8b, gpu: gpu('nvidia-l4'), gpuCount: 1, contextLength: 131072 });
  t.false(long.fits);
  t.is(long.kvPerSequenceGb, 16);
  t.is(smallestGpuCount(llama8b, gpu('nvidia-l4'), 131072), 2);
});

test('a 70B model needs more than one 80 GB GPU in 16 bits: two at an 8k context, four at 128k', (t) => {
  const one = modelFit({ model: llama70b, gpu: gpu('nvidia-h100-80gb'), gpuCount: 1, contextLength: 8192 });
  t.false(one.fits);
  t.true(one.kvCacheGb < 0, 'the weights alone (about 131 GiB) exceed one GPU');
  t.is(smallestGpuCount(llama70b, gpu('nvidia-h100-80gb'), 8192), 2);
  t.is(smallestGpuCount(llama70b, gpu('nvidia-h100-80gb'), 131072), 4);
  t.is(smallestGpuCount(llama70b, gpu('nvidia-t4'), 8192), undefined, 'eight 16 GB GPUs are not enough');
});

test('a 7B model in 16 bits does not fit a 16 GB T4; two do', (t) => {
  t.false(modelFit({ model: qwen7b, gpu: gpu('nvidia-t4'), gpuCount: 1, contextLength: 4096 }).fits);
  t.is(smallestGpuCount(qwen7b, gpu('nvidia-t4'), qwen7b.contextLength), 2);
});

test('decoding speed is bounded by memory bandwidth: an 8B model decodes about 100-170 tokens/s on one H100', (t) => {
  t.deepEqual(decodeTokensPerSecond(llama8b, gpu('nvidia-h100-80gb'), 1), [104, 167]);
  const [low, high] = decodeTokensPerSecond(llama8b, gpu('nvidia-l4'), 1);
  t.true(low < 10 && high < 16, 'an L4 has a tenth of the bandwidth');
});
