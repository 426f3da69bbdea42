// The model catalog: well-formed entries vLLM can serve, case-insensitive lookup, and the published figures
// of the models whose sizing the rest of Kiln leans on.
import test from 'ava';
import { findCatalogModel, MODELS, VLLM_ARCHITECTURES, type ModelTask } from '../../catalog/models.ts';

test('the catalog offers at least 30 models, each under a unique org/name id', (t) => {
  t.true(MODELS.length >= 30);
  const ids = MODELS.map((m) => m.id.toLowerCase());
  t.is(new Set(ids).size, ids.length);
  for (const m of MODELS) t.regex(m.id, /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/, m.id);
});

test('every model is one vLLM can serve, with positive integer shapes', (t) => {
  for (const m of MODELS) {
    t.true(VLLM_ARCHITECTURES.includes(m.architecture), `${m.id}: ${m.architecture}`);
    for (const value of [m.layers, m.kvHeads, m.headSize, m.contextLength]) {
      t.true(Number.isInteger(value) && value > 0, `${m.id}: ${value}`);
    }
    t.true(m.parametersBillion > 0, m.id);
    t.truthy(m.displayName && m.family && m.license, m.id);
  }
});

test('chat, completion and embedding models are all on offer', (t) => {
  const tasks: ModelTask[] = ['chat', 'completion', 'embedding'];
  for (const task of tasks) t.true(MODELS.some((m) => m.task === task), task);
  for (const id of ['BAAI/bge-large-en-v1.5', 'intfloat/e5-mistral-7b-instruct', 'Alibaba-NLP/gte-Qwen2-1.5B-instruct']) {
    t.is(findCatalogModel(id)?.task, 'embedding', id);
  }
});

test('models are found by id whatever the case; unknown ids are not', (t) => {
  t.is(findCatalogModel('meta-llama/llama-3.1-8b-instruct')?.id, 'meta-llama/Llama-3.1-8B-Instruct');
  t.is(findCatalogModel('QWEN/QWEN2.5-7B-INSTRUCT')?.id, 'Qwen/Qwen2.5-7B-Instruct');
  t.is(findCatalogModel('meta-llama/Llama-3.1-8B-Instruct')?.id, 'meta-llama/Llama-3.1-8B-Instruct');
  t.is(findCatalogModel('acme/not-a-model'), undefined);
  t.is(findCatalogModel('Llama-3.1-8B-Instruct'), undefined);
  t.is(findCatalogModel(''), undefined);
});

test('Llama 3.1 8B Instruct has its published figures and needs a Hugging Face token', (t) => {
  t.like(findCatalogModel('meta-llama/Llama-3.1-8B-Instruct'), {
    parametersBillion: 8.03, architecture: 'LlamaForCausalLM', layers: 32, kvHeads: 8, headSize: 128,
    contextLength: 131072, dtype: 'bfloat16', license: 'llama3.1', gated: true, task: 'chat',
  });
  t.like(findCatalogModel('meta-llama/Llama-3.1-70B-Instruct'), { parametersBillion: 70.6, layers: 80, kvHeads: 8, headSize: 128, contextLength: 131072 });
});

test('Qwen2.5 7B Instruct has its published figures and downloads without a token', (t) => {
  t.like(findCatalogModel('Qwen/Qwen2.5-7B-Instruct'), {
    parametersBillion: 7.62, architecture: 'Qwen2ForCausalLM', layers: 28, kvHeads: 4, headSize: 128,
    contextLength: 32768, dtype: 'bfloat16', license: 'apache-2.0', gated: false, task: 'chat',
  });
});

test('gated models are exactly those from Meta, Google and Mistral AI', (t) => {
  for (const m of MODELS) {
    t.is(m.gated, /^(meta-llama|google|mistralai)\//.test(m.id), m.id);
  }
});
