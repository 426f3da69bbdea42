// How vLLM serves a deployment (GPUs per replica, context length, dtype, extra flags) and the model fit check
// creation and update share with POST /v1/models/{id}/validate: sizes Kiln settles, what cannot fit refused
// with the arithmetic before any workflow starts, and what reaches the workflow.
import test from 'ava';
import { desiredStatesSent, signup, startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

const LLAMA_8B = 'meta-llama/Llama-3.1-8B-Instruct';
const LLAMA_70B = 'meta-llama/Llama-3.1-70B-Instruct';
const create = (token: string, body: Record<string, unknown>) =>
  api.request('POST', '/v1/deployments', { token, body: { name: 'chat', runtime: 'vllm', gpu: 'nvidia-l4', model: LLAMA_8B, ...body } });
const read = async (token: string, id: string) => (await api.request('GET', `/api/deployments/${id}`, { token })).body.data;
const count = async (token: string, organizationId: string) => (await api.request('GET', `/v1/deployments?orgId=${organizationId}`, { token })).body.data.length;

test('left to Kiln, an 8B model on an L4 gets one GPU and the longest context it holds (about 41k of its 128k tokens)', async (t) => {
  const { token } = await signup(api);
  const res = await create(token, {});
  t.is(res.status, 201);
  // 21.6 GB usable - 14.96 GB weights - 1.5 GB runtime leaves 5.14 GB of KV cache at 128 KiB a token: 42,130 tokens, 41 x 1024.
  t.like(await read(token, res.body.id), { gpusPerReplica: 1, contextLength: 41_984, dtype: 'auto', vllmArgs: [] });
  const [sent] = await desiredStatesSent(api, res.body.id);
  t.like(sent, { gpusPerReplica: 1, contextLength: 41_984, dtype: 'auto', vllmArgs: [] });
});

test('an 8B model at its full 128k context does not fit one L4: refused on contextLength with the arithmetic, nothing created', async (t) => {
  const { token, organizationId } = await signup(api);
  const res = await create(token, { gpusPerReplica: 1, contextLength: 131_072 });
  t.is(res.status, 422);
  t.is(res.body.code, 'VALIDATION_ERROR');
  t.regex(res.body.message, /^Invalid field contextLength: meta-llama\/Llama-3\.1-8B-Instruct on NVIDIA L4 24GB: 1 GPU\(s\) give 21\.6 GB usable .* KV cache 5\.14 GB at 16 GB per sequence: does not fit/);
  t.is(await count(token, organizationId), 0);

  // Asked for the context alone, Kiln takes the two L4s that hold it.
  const sized = await create(token, { contextLength: 131_072 });
  t.is(sized.status, 201);
  t.like(await read(token, sized.body.id), { gpusPerReplica: 2, contextLength: 131_072 });
});

test('a 70B model in 16 bits needs more than one 80 GB GPU, and no number of T4s holds it', async (t) => {
  const { token } = await signup(api);
  const one = await create(token, { model: LLAMA_70B, gpu: 'nvidia-h100-80gb', gpusPerReplica: 1 });
  t.is(one.status, 422);
  t.regex(one.body.message, /^Invalid field gpusPerReplica: .*weights 131\.5 GB.*the weights alone exceed the usable memory/);

  const sized = await create(token, { model: LLAMA_70B, gpu: 'nvidia-h100-80gb' });
  t.is(sized.status, 201);
  t.like(await read(token, sized.body.id), { gpusPerReplica: 2 });

  const t4 = await create(token, { name: 'other', model: LLAMA_70B, gpu: 'nvidia-t4' });
  t.is(t4.status, 422);
  t.regex(t4.body.message, /^Invalid field gpusPerReplica: meta-llama\/Llama-3\.1-70B-Instruct does not fit even 8 NVIDIA T4 16GB/);
});

test('a context beyond the model\'s own, a flag Kiln sets, an unknown dtype and a GPU count that is no power of two are refused', async (t) => {
  const { token, organizationId } = await signup(api);
  const beyond = await create(token, { contextLength: 200_000 });
  t.is(beyond.status, 422);
  t.is(beyond.body.message, "Invalid field contextLength: 200000 tokens exceeds meta-llama/Llama-3.1-8B-Instruct's context length of 131072");

  const managed = await api.request('POST', '/api/deployments', { token, body: { name: 'chat', runtime: 'vllm', gpu: 'nvidia-l4', model: LLAMA_8B, vllmArgs: ['--max-model-len=8192'] } });
  t.is(managed.status, 422);
  t.deepEqual(managed.body.error.details.fields, [{ field: 'vllmArgs', message: "--max-model-len is set by Kiln from the deployment's own fields" }]);

  t.is((await create(token, { dtype: 'int4' })).status, 422);
  const three = await create(token, { gpusPerReplica: 3 });
  t.is(three.status, 400);
  t.is(three.body.message.startsWith('Invalid field gpusPerReplica'), true);
  t.is(await count(token, organizationId), 0);
});

test('what is asked for is kept and sent to the workflow; a model Kiln has no figures for runs as asked, with vLLM\'s own context', async (t) => {
  const { token } = await signup(api);
  const res = await create(token, { contextLength: 8192, dtype: 'bfloat16', vllmArgs: ['--enable-prefix-caching'] });
  t.is(res.status, 201);
  t.like(await read(token, res.body.id), { gpusPerReplica: 1, contextLength: 8192, dtype: 'bfloat16', vllmArgs: ['--enable-prefix-caching'] });
  t.like((await desiredStatesSent(api, res.body.id)).at(-1), { contextLength: 8192, dtype: 'bfloat16', vllmArgs: ['--enable-prefix-caching'] });

  const unknown = await create(token, { name: 'mine', model: 'acme/private-model' });
  t.is(unknown.status, 201);
  t.like(await read(token, unknown.body.id), { gpusPerReplica: 1, contextLength: null });
  t.false('contextLength' in (await desiredStatesSent(api, unknown.body.id)).at(-1)!);
});

test('PATCH keeps the sizing unless the model or GPU changes; a change that cannot fit is refused and changes nothing', async (t) => {
  const { token } = await signup(api);
  const { body: { id } } = await create(token, { contextLength: 8192 });

  const args = await api.request('PATCH', `/api/deployments/${id}`, { token, body: { vllmArgs: ['--enforce-eager'] } });
  t.is(args.status, 200);
  t.like(args.body.data, { contextLength: 8192, gpusPerReplica: 1, vllmArgs: ['--enforce-eager'] });

  const tooLong = await api.request('PATCH', `/api/deployments/${id}`, { token, body: { contextLength: 131_072 } });
  t.is(tooLong.status, 422);
  const bigger = await api.request('PATCH', `/api/deployments/${id}`, { token, body: { model: LLAMA_70B, gpusPerReplica: 1 } });
  t.is(bigger.status, 422);
  t.like(await read(token, id), { model: LLAMA_8B, contextLength: 8192, gpusPerReplica: 1 });

  // A new GPU type is sized afresh: on an H100 the 8B model's whole context fits one GPU.
  const moved = await api.request('PATCH', `/api/deployments/${id}`, { token, body: { gpu: 'nvidia-h100-80gb' } });
  t.is(moved.status, 200);
  t.like(moved.body.data, { gpu: 'nvidia-h100-80gb', gpusPerReplica: 1, contextLength: 131_072, vllmArgs: ['--enforce-eager'] });
  t.like((await desiredStatesSent(api, id)).at(-1), { gpu: 'nvidia-h100-80gb', contextLength: 131_072 });
});

test('credits cover every GPU of every replica: two L4s per replica cost twice one', async (t) => {
  const { token, organizationId } = await signup(api);
  // One L4 costs 80 cents an hour: the balance is set to cover one replica of one GPU, not of two.
  await api.pool.query('update organization set credits_cents = 100 where id = $1', [organizationId]);
  const two = await create(token, { gpusPerReplica: 2 });
  t.is(two.status, 402);
  t.like(two.body, { code: 'INSUFFICIENT_CREDITS' });
  t.is((await create(token, { gpusPerReplica: 1 })).status, 201);
});
