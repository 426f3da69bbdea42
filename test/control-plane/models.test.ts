// The model catalog over HTTP: search with filters and cursor pages on both surfaces, a model's details
// with what each GPU type needs, and validation of one placement with the arithmetic shown.
import test from 'ava';
import { addMember, signup, type TestApi } from '../support/control-plane.ts';
import { startHubApi } from '../support/hub-recordings.ts';

let api: TestApi;
let close: () => Promise<void>;
// A model outside the catalog is the Hub's to describe: here, the stand-in serving recorded Hub answers.
test.before(async () => {
  ({ api, close } = await startHubApi(import.meta.filename));
});
test.after.always(() => close?.());

const LLAMA_8B = encodeURIComponent('meta-llama/Llama-3.1-8B-Instruct');
const ids = (body: Array<{ id: string }>) => body.map((m) => m.id);

test('GET /v1/models/search finds by text and filters, in cursor pages that together list each match once', async (t) => {
  const { token, organizationId } = await signup(api);
  const llama = await api.request('GET', `/v1/models/search?orgId=${organizationId}&q=llama%203.1&task=chat`, { token });
  t.is(llama.status, 200);
  t.true(ids(llama.body.data).includes('meta-llama/Llama-3.1-8B-Instruct'));
  t.true(ids(llama.body.data).every((id) => /llama-3\.1/i.test(id)), JSON.stringify(ids(llama.body.data)));

  const embeddings = await api.request('GET', `/v1/models/search?orgId=${organizationId}&task=embedding`, { token });
  t.true(embeddings.body.data.length >= 3);
  t.true(embeddings.body.data.every((m: { task: string }) => m.task === 'embedding'));

  const open = await api.request('GET', `/v1/models/search?orgId=${organizationId}&gated=false&license=apache-2.0&maxParamsB=8`, { token });
  t.true(open.body.data.length > 0);
  t.true(open.body.data.every((m: { gated: boolean; license: string; parametersBillion: number }) => !m.gated && m.license === 'apache-2.0' && m.parametersBillion <= 8));

  // What fits one replica of T4s at 4k tokens: small models, no 70B.
  const onT4 = await api.request('GET', `/v1/models/search?orgId=${organizationId}&fitsGpu=nvidia-t4&contextLength=4096&limit=100`, { token });
  t.true(ids(onT4.body.data).includes('Qwen/Qwen2.5-7B-Instruct'));
  t.false(ids(onT4.body.data).includes('meta-llama/Llama-3.1-70B-Instruct'));

  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: { data: Array<{ id: string }>; pagination: { nextCursor: string | null } } } = await api.request('GET', `/v1/models/search?orgId=${organizationId}&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
    t.is(page.status, 200);
    t.true(page.body.data.length <= 7);
    seen.push(...ids(page.body.data));
    cursor = page.body.pagination.nextCursor;
  } while (cursor);
  t.true(seen.length >= 30);
  t.is(new Set(seen).size, seen.length, 'no model twice');

  const platform = await api.request('GET', '/api/models?q=qwen&limit=5', { token });
  t.is(platform.status, 200);
  t.true(platform.body.success);
  t.is(platform.body.data.length, 5);
  t.true(platform.body.pagination.hasMore);
});

test('GET /v1/models/{id} gives the facts and, per GPU type, the fewest GPUs per replica, its price and a speed band', async (t) => {
  const { token, organizationId } = await signup(api);
  const res = await api.request('GET', `/v1/models/${LLAMA_8B}?orgId=${organizationId}&contextLength=4096`, { token });
  t.is(res.status, 200);
  t.like(res.body, { id: 'meta-llama/Llama-3.1-8B-Instruct', source: 'catalog', parametersBillion: 8.03, layers: 32, kvHeads: 8, headSize: 128, contextLength: 131072, gated: true, task: 'chat' });
  const on = (gpu: string) => res.body.hardware.find((h: { gpu: string }) => h.gpu === gpu);
  t.like(on('nvidia-l4'), { gpusPerReplica: 1, hourlyPriceUsd: 0.8, contextLength: 4096 });
  t.like(on('nvidia-t4'), { gpusPerReplica: 2, hourlyPriceUsd: 1.06 });
  t.deepEqual(on('nvidia-h100-80gb').tokensPerSecond, { low: 104, high: 167 });
  // At its full 128k context one L4 is not enough.
  const full = await api.request('GET', `/v1/models/${LLAMA_8B}?orgId=${organizationId}`, { token });
  t.like(full.body.hardware.find((h: { gpu: string }) => h.gpu === 'nvidia-l4'), { gpusPerReplica: 2, contextLength: 131072 });
});

test('POST /v1/models/{id}/validate lists each check with its reason and the memory arithmetic', async (t) => {
  const { token } = await signup(api);
  const fits = await api.request('POST', `/v1/models/${LLAMA_8B}/validate`, { token, body: { gpu: 'nvidia-l4', contextLength: 4096 } });
  t.is(fits.status, 200);
  t.like(fits.body, { model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4', gpusPerReplica: 1, contextLength: 4096 });
  t.like(fits.body.memory, { fits: true, usableGb: 21.6, weightsGb: 14.96, overheadGb: 1.5, kvPerSequenceGb: 0.5, maxConcurrentSequences: 10 });
  const check = (body: { checks: Array<{ check: string; passed: boolean; reason: string }> }, name: string) => body.checks.find((c) => c.check === name)!;
  t.true(check(fits.body, 'memory').passed);
  t.regex(check(fits.body, 'memory').reason, /weights 14\.96 GB.*10 sequence\(s\) of 4096 tokens/);
  t.true(check(fits.body, 'architecture').passed);
  // Gated on the Hub: without a token secret the deployment could not download it; the reason says how to make one.
  t.false(check(fits.body, 'gated_token').passed);
  t.regex(check(fits.body, 'gated_token').reason, /store a Hugging Face token with POST \/v1\/secrets .*"type":"huggingface_token".*secrets: \[\{"name":"HF_TOKEN"/);
  t.false(fits.body.valid);
  // With the organization's token stored, the check names it and how a deployment mounts it.
  const stored = await api.request('POST', '/v1/secrets', { token, body: { name: 'hf', type: 'huggingface_token', value: 'hf_modelsTestToken000000Zq9X' } });
  t.is(stored.status, 201);
  const withToken = await api.request('POST', `/v1/models/${LLAMA_8B}/validate`, { token, body: { gpu: 'nvidia-l4', contextLength: 4096 } });
  t.like(check(withToken.body, 'gated_token'), { passed: null, reason: `the Hugging Face Hub gates this model: mount the organization's token secret "hf" in the deployment as secrets: [{"name":"HF_TOKEN","secretId":"${stored.body.id}"}]` });
  t.true(withToken.body.valid);

  const tooLong = await api.request('POST', `/v1/models/${LLAMA_8B}/validate`, { token, body: { gpu: 'nvidia-l4', contextLength: 131072 } });
  t.false(check(tooLong.body, 'memory').passed);
  t.regex(check(tooLong.body, 'memory').reason, /does not fit: one sequence of 131072 tokens needs more KV cache than is left/);
  const beyond = await api.request('POST', `/v1/models/${LLAMA_8B}/validate`, { token, body: { gpu: 'nvidia-h100-80gb', gpusPerReplica: 8, contextLength: 200000 } });
  t.false(check(beyond.body, 'context_length').passed);

  const open = await api.request('POST', `/v1/models/${encodeURIComponent('Qwen/Qwen2.5-7B-Instruct')}/validate`, { token, body: { gpu: 'nvidia-l4', gpusPerReplica: 2 } });
  t.true(open.body.valid, JSON.stringify(open.body.checks));
});

test('bad input is 400 naming what is wrong: a malformed model is INVALID_MODEL with the sources, one the Hub does not have 404', async (t) => {
  const { token, organizationId } = await signup(api);
  const malformed = await api.request('POST', `/v1/models/${encodeURIComponent('not a model')}/validate`, { token, body: { gpu: 'nvidia-l4' } });
  t.is(malformed.status, 400);
  t.is(malformed.body.code, 'INVALID_MODEL');
  const unknown = await api.request('GET', `/v1/models/${encodeURIComponent('someone/unheard-of')}?orgId=${organizationId}`, { token });
  t.is(unknown.status, 404);
  // Missing, wrong type or unknown fields are 400; a value outside the rules 422; each names the field.
  const cases: Array<[Record<string, unknown>, number, RegExp]> = [
    [{}, 400, /gpu/], [{ gpu: 'nvidia-l4', contextLength: 'long' }, 400, /contextLength/], [{ gpu: 'nvidia-l4', extra: 1 }, 400, /extra/],
    [{ gpu: 'nvidia-b200' }, 422, /gpu/], [{ gpu: 'nvidia-l4', gpusPerReplica: 3 }, 400, /gpusPerReplica/],
  ];
  for (const [body, status, field] of cases) {
    const res = await api.request('POST', `/v1/models/${LLAMA_8B}/validate`, { token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.regex(res.body.message, field);
  }
  for (const query of ['task=poetry', 'minParamsB=-1', 'gated=maybe', 'fitsGpu=nvidia-b200', 'limit=0', 'cursor=forged', 'colour=red']) {
    const res = await api.request('GET', `/v1/models/search?orgId=${organizationId}&${query}`, { token });
    t.true(res.status === 400 || res.status === 422, `${query}: ${res.status}`);
    t.regex(res.body.message, new RegExp(query.split('=')[0]!), query);
  }
  const platform = await api.request('GET', '/api/models?task=poetry', { token });
  t.true(platform.status === 400 || platform.status === 422);
  t.is(platform.body.success, false);
});

test('no credential is 401; a role without catalog:read is 403; orgId of another organization is 403', async (t) => {
  const owner = await signup(api);
  for (const [method, path] of [['GET', `/v1/models/search?orgId=${owner.organizationId}`], ['GET', '/api/models'], ['GET', `/v1/models/${LLAMA_8B}?orgId=${owner.organizationId}`], ['POST', `/v1/models/${LLAMA_8B}/validate`]] as const) {
    t.is((await api.request(method, path, { body: method === 'POST' ? { gpu: 'nvidia-l4' } : undefined })).status, 401, path);
  }
  const role = await api.request('POST', '/v1/enterprise/roles', { token: owner.token, body: { name: 'Deployment reader', permissions: ['deployments:read'] } });
  const reader = await addMember(api, owner.organizationId, 'member');
  t.is((await api.request('POST', '/v1/enterprise/assignments', { token: owner.token, body: { userId: reader.userId, roleId: role.body.id } })).status, 200);
  t.is((await api.request('GET', `/v1/models/search?orgId=${owner.organizationId}`, reader.as)).status, 403);
  t.is((await api.request('POST', `/v1/models/${LLAMA_8B}/validate`, { ...reader.as, body: { gpu: 'nvidia-l4' } })).status, 403);
  const other = await signup(api);
  t.is((await api.request('GET', `/v1/models/search?orgId=${other.organizationId}`, { token: owner.token })).status, 403);
});
