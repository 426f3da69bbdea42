// An organization's own models over HTTP: Hugging Face models outside the catalog described by the Hub (a
// stand-in serving recorded Hub answers), s3/gs/pvc locations, joining the registry by validation, PATCH and
// DELETE of the organization's entries (catalog models read-only, another organization's unseen), and a Hub
// that fails being a 503 for its lookups alone.
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { Principal } from '../../control-plane/auth/principal.ts';
import { loadConfig } from '../../control-plane/config.ts';
import { InvalidModelError, NotFoundError, ServiceUnavailableError } from '../../control-plane/core/errors.ts';
import { createCursorCodec } from '../../control-plane/core/pagination.ts';
import { ROLE_PERMISSIONS } from '../../control-plane/core/permissions.ts';
import { createHubClient } from '../../control-plane/models/hub.ts';
import { createModelService } from '../../control-plane/models/service.ts';
import { createApiKey, addMember, signup, startTestApi, type TestApi } from '../support/control-plane.ts';
import { RECORDED_HUB_TOKEN, startHubApi, startHubRecordings, type HubRecordings } from '../support/hub-recordings.ts';

let hub: HubRecordings;
let api: TestApi;
let close: () => Promise<void>;
test.before(async () => {
  ({ api, hub, close } = await startHubApi(import.meta.filename));
});
test.after.always(() => close?.());

const path = (model: string) => `/v1/models/${encodeURIComponent(model)}`;
const GRANITE = 'ibm-granite/granite-3.1-8b-instruct';
const PHI_MOE = 'microsoft/Phi-3.5-MoE-instruct';
const LLAMA_3 = 'meta-llama/Meta-Llama-3-8B-Instruct';
type Check = { check: string; passed: boolean | null; reason: string };
const check = (body: { checks: Check[] }, name: string) => body.checks.find((c) => c.check === name)!;
const search = async (token: string, organizationId: string, q: string) =>
  (await api.request('GET', `/v1/models/search?orgId=${organizationId}&q=${encodeURIComponent(q)}&limit=100`, { token })).body.data as Array<{ id: string; source: string }>;

test('a Hugging Face model outside the catalog is described by the Hub: facts, hardware per GPU type, validation', async (t) => {
  const { token, organizationId } = await signup(api);
  const moe = await api.request('GET', `${path(PHI_MOE)}?orgId=${organizationId}&contextLength=4096`, { token });
  t.is(moe.status, 200, JSON.stringify(moe.body));
  t.like(moe.body, {
    id: PHI_MOE, source: 'hub', displayName: 'Phi-3.5-MoE-instruct', family: 'phimoe', parametersBillion: 41.9, architecture: 'PhiMoEForCausalLM',
    contextLength: 131072, layers: 32, kvHeads: 8, headSize: 128, dtype: 'bfloat16', license: 'mit', gated: false, task: 'chat', defaultVllmArgs: [],
  });
  const on = (gpu: string) => moe.body.hardware.find((h: { gpu: string }) => h.gpu === gpu);
  // 41.9B parameters in 16 bits are 78 GB: more than one H100's 72 usable GB, within two.
  t.like(on('nvidia-h100-80gb'), { gpusPerReplica: 2, contextLength: 4096 });

  const granite = await api.request('POST', `${path(GRANITE)}/validate`, { token, body: { gpu: 'nvidia-l4', contextLength: 4096 } });
  t.is(granite.status, 200);
  t.like(granite.body, { model: GRANITE, valid: true, contextLength: 4096 });
  t.like(granite.body.memory, { fits: true, weightsGb: 15.22, kvPerSequenceGb: 0.63, maxConcurrentSequences: 7 });
  t.regex(check(granite.body, 'source').reason, /on the Hugging Face Hub/);
  t.like(check(granite.body, 'architecture'), { passed: true, reason: 'vLLM serves GraniteForCausalLM' });
  // Its full 128k context needs more KV cache than one L4 leaves.
  const long = await api.request('POST', `${path(GRANITE)}/validate`, { token, body: { gpu: 'nvidia-l4' } });
  t.like(long.body, { contextLength: 131072, valid: false });
  t.false(check(long.body, 'memory').passed);

  // A pinned revision is the Hub's too; one the Hub does not know is 404, as is a model it does not have.
  t.is((await api.request('GET', `${path(`${GRANITE}@main`)}?orgId=${organizationId}`, { token })).status, 200);
  const revision = await api.request('GET', `${path(`${GRANITE}@no-such-branch`)}?orgId=${organizationId}`, { token });
  t.is(revision.status, 404);
  const missing = await api.request('GET', `${path('someone/unheard-of')}?orgId=${organizationId}`, { token });
  t.is(missing.status, 404);
  t.regex(missing.body.message, /someone\/unheard-of was not found on the Hugging Face Hub/);
});

test('a gated model: the Hub tells its size and gating; its shape needs KILN_HF_TOKEN, and the checks say what is unknown', async (t) => {
  const { token, organizationId } = await signup(api);
  const gated = await api.request('GET', `${path(LLAMA_3)}?orgId=${organizationId}`, { token });
  t.is(gated.status, 200);
  t.like(gated.body, { source: 'hub', gated: true, license: 'llama3', parametersBillion: 8.03, task: 'chat', architecture: null, layers: null, hardware: [] });
  const checked = await api.request('POST', `${path(LLAMA_3)}/validate`, { token, body: { gpu: 'nvidia-l4', contextLength: 4096 } });
  t.is(checked.status, 200);
  t.like(check(checked.body, 'memory'), { passed: null });
  t.regex(check(checked.body, 'memory').reason, /unknown.*KILN_HF_TOKEN/);
  t.false(check(checked.body, 'gated_token').passed);
  t.is(checked.body.memory, null);
  t.false(checked.body.valid);

  // With a token the Hub lets Kiln read config.json: the whole shape, and what fits.
  const withToken = await startTestApi(`${import.meta.filename}-token`, { config: hub.hubConfig(RECORDED_HUB_TOKEN) });
  t.teardown(() => withToken.close());
  const user = await signup(withToken);
  const full = await withToken.request('GET', `${path(LLAMA_3)}?orgId=${user.organizationId}`, { token: user.token });
  t.like(full.body, { architecture: 'LlamaForCausalLM', contextLength: 8192, layers: 32, kvHeads: 8, headSize: 128 });
  t.like(full.body.hardware.find((h: { gpu: string }) => h.gpu === 'nvidia-l4'), { gpusPerReplica: 1, contextLength: 8192 });
});

test('validating joins the organization\'s models (not for read-only keys); search and GET list them as source organization', async (t) => {
  const owner = await signup(api);
  t.deepEqual(await search(owner.token, owner.organizationId, 'granite'), []);
  const readOnly = await createApiKey(api, owner.token, 'read_only');
  t.is((await api.request('POST', `${path(GRANITE)}/validate`, { token: readOnly.key, body: { gpu: 'nvidia-l4' } })).status, 200);
  t.deepEqual(await search(owner.token, owner.organizationId, 'granite'), [], 'a read-only key changes nothing');

  for (const model of [`hf://${GRANITE}`, 's3://acme-models/llama-ft/v3', 'pvc://model-store/qwen/7b-ft']) {
    const res = await api.request('POST', `${path(model)}/validate`, { token: owner.token, body: { gpu: 'nvidia-l4' } });
    t.is(res.status, 200, model);
  }
  const listed = await search(owner.token, owner.organizationId, '');
  t.like(listed.find((m) => m.id === GRANITE), { source: 'organization', parametersBillion: 8.17, architecture: 'GraniteForCausalLM' });
  t.like(listed.find((m) => m.id === 's3://acme-models/llama-ft/v3'), { source: 'organization', parametersBillion: null, architecture: null });
  t.truthy(listed.find((m) => m.id === 'pvc://model-store/qwen/7b-ft'));
  t.like(listed.find((m) => m.id === 'meta-llama/Llama-3.1-8B-Instruct'), { source: 'catalog' });
  // Filters on facts leave out the models whose facts are unknown; the platform list shows the same models.
  const small = (await api.request('GET', `/v1/models/search?orgId=${owner.organizationId}&maxParamsB=9&q=granite`, { token: owner.token })).body.data;
  t.deepEqual(small.map((m: { id: string }) => m.id), [GRANITE]);
  const platform = await api.request('GET', '/api/models?q=acme&limit=5', { token: owner.token });
  t.deepEqual(platform.body.data.map((m: { id: string }) => m.id), ['s3://acme-models/llama-ft/v3']);
  // Validating again adds nothing twice.
  await api.request('POST', `${path(GRANITE)}/validate`, { token: owner.token, body: { gpu: 'nvidia-l4' } });
  t.is((await search(owner.token, owner.organizationId, 'granite')).length, 1);

  const entry = await api.request('GET', `${path('s3://acme-models/llama-ft/v3')}?orgId=${owner.organizationId}`, { token: owner.token });
  t.like(entry.body, { source: 'organization', hardware: [], layers: null });
  // Storage locations: well formed, their size unknown, which fails nothing.
  const storage = await api.request('POST', `${path('s3://acme-models/llama-ft/v3')}/validate`, { token: owner.token, body: { gpu: 'nvidia-l4' } });
  t.like(storage.body, { valid: true, memory: null, contextLength: null });
  t.like(check(storage.body, 'source'), { passed: true });
  t.like(check(storage.body, 'memory'), { passed: null });
  t.regex(check(storage.body, 'memory').reason, /unknown.*s3:\/\//);

  // Another organization sees none of it: its storage references are 404, its search lists none.
  const other = await signup(api);
  t.is((await api.request('GET', `${path('s3://acme-models/llama-ft/v3')}?orgId=${other.organizationId}`, { token: other.token })).status, 404);
  t.false((await search(other.token, other.organizationId, '')).some((m) => m.source === 'organization'));
  t.like((await api.request('GET', `${path(GRANITE)}?orgId=${other.organizationId}`, { token: other.token })).body, { source: 'hub' });
});

test('PATCH changes the organization\'s entry; bad input is 400 or 422 naming the field; catalog models are read-only (403)', async (t) => {
  const { token, organizationId } = await signup(api);
  await api.request('POST', `${path(GRANITE)}/validate`, { token, body: { gpu: 'nvidia-l4' } });
  const changed = await api.request('PATCH', path(GRANITE), {
    token, body: { displayName: 'Granite (support bot)', description: 'Fine for tickets', defaultVllmArgs: ['--enable-prefix-caching'], defaultContextLength: 8192 },
  });
  t.is(changed.status, 200, JSON.stringify(changed.body));
  t.like(changed.body, { id: GRANITE, source: 'organization', displayName: 'Granite (support bot)', description: 'Fine for tickets', defaultVllmArgs: ['--enable-prefix-caching'], defaultContextLength: 8192 });
  const read = await api.request('GET', `${path(GRANITE.toUpperCase())}?orgId=${organizationId}`, { token });
  t.like(read.body, { displayName: 'Granite (support bot)', defaultContextLength: 8192 });
  // The organization's default context length is what validation and the hardware table assume.
  t.like(read.body.hardware.find((h: { gpu: string }) => h.gpu === 'nvidia-l4'), { contextLength: 8192, gpusPerReplica: 1 });
  const validated = await api.request('POST', `${path(GRANITE)}/validate`, { token, body: { gpu: 'nvidia-l4' } });
  t.like(validated.body, { contextLength: 8192, valid: true });
  // null puts the model's own back.
  const reset = await api.request('PATCH', path(GRANITE), { token, body: { displayName: null, defaultContextLength: null } });
  t.like(reset.body, { displayName: 'granite-3.1-8b-instruct', defaultContextLength: null, description: 'Fine for tickets' });

  const cases: Array<[Record<string, unknown>, number, RegExp]> = [
    [{ defaultVllmArgs: '--enable-prefix-caching' }, 400, /defaultVllmArgs/],
    [{ defaultContextLength: 'long' }, 400, /defaultContextLength/],
    [{ colour: 'red' }, 400, /colour/],
    [{ defaultContextLength: 0 }, 422, /defaultContextLength/],
    [{ defaultContextLength: 200_000 }, 422, /defaultContextLength: must be at most the model's context length, 131072/],
    [{ defaultVllmArgs: ['--tensor-parallel-size=2'] }, 422, /defaultVllmArgs: --tensor-parallel-size is set by Kiln/],
    [{ displayName: '' }, 422, /displayName/],
  ];
  for (const [body, status, message] of cases) {
    const res = await api.request('PATCH', path(GRANITE), { token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.regex(res.body.message, message);
  }
  t.is((await api.request('PATCH', path('not a model'), { token, body: {} })).body.code, 'INVALID_MODEL');

  for (const model of ['meta-llama/Llama-3.1-8B-Instruct', 'hf://Qwen/Qwen2.5-7B-Instruct@main']) {
    const patch = await api.request('PATCH', path(model), { token, body: { description: 'mine' } });
    t.is(patch.status, 403, model);
    t.regex(patch.body.message, /in Kiln's catalog, which organizations cannot change/);
    t.is((await api.request('DELETE', path(model), { token })).status, 403, model);
  }
  // A model the organization never validated nor deployed is not its own to change.
  t.is((await api.request('PATCH', path(PHI_MOE), { token, body: { description: 'x' } })).status, 404);
});

test('DELETE removes the entry, but not while a live deployment of the organization uses it (409)', async (t) => {
  const { token, organizationId } = await signup(api);
  const model = 'pvc://model-store/llama-ft';
  await api.request('POST', `${path(model)}/validate`, { token, body: { gpu: 'nvidia-l4' } });
  // A deployment running that model, written directly: what matters here is the registry's answer.
  await api.pool.query(
    `insert into deployment (id, created_at, organization_id, name, model, runtime, gpu, status, endpoint, replicas, min_replicas, max_replicas, current_replicas, updated_at)
     values ($1, now(), $2, 'ft-chat', $3, 'vllm', 'nvidia-l4', 'running', 'https://e', 1, 1, 1, 1, now())`,
    [`dep_reg${organizationId.slice(4, 21)}`, organizationId, model],
  );
  const inUse = await api.request('DELETE', path(model), { token });
  t.is(inUse.status, 409);
  t.is(inUse.body.code, 'RESOURCE_IN_USE');
  t.regex(inUse.body.message, /used by 1 deployment\(s\) \(ft-chat\)/);
  // Once its deletion is requested the deployment no longer holds the model.
  await api.pool.query(`update deployment set delete_requested = true where organization_id = $1`, [organizationId]);
  const removed = await api.request('DELETE', path(model), { token });
  t.is(removed.status, 200);
  t.deepEqual(removed.body, { id: model, deleted: true });
  t.is((await api.request('GET', `${path(model)}?orgId=${organizationId}`, { token })).status, 404);
  t.is((await api.request('DELETE', path(model), { token })).status, 404);
});

test('no credential is 401; read-only and deployments-only keys and viewers may not change models (403); another organization\'s entry is 404', async (t) => {
  const owner = await signup(api);
  const model = 'gs://acme-weights/mistral-ft';
  await api.request('POST', `${path(model)}/validate`, { token: owner.token, body: { gpu: 'nvidia-l4' } });
  t.is((await api.request('PATCH', path(model), { body: { description: 'x' } })).status, 401);
  t.is((await api.request('DELETE', path(model))).status, 401);
  t.is((await api.request('GET', `${path(GRANITE)}?orgId=${owner.organizationId}`)).status, 401);
  for (const scope of ['read_only', 'deployments_only'] as const) {
    const key = await createApiKey(api, owner.token, scope);
    t.is((await api.request('PATCH', path(model), { token: key.key, body: { description: 'x' } })).status, 403, scope);
    t.is((await api.request('DELETE', path(model), { token: key.key })).status, 403, scope);
    // Reading is theirs: the catalog permission.
    t.is((await api.request('GET', `${path(model)}?orgId=${owner.organizationId}`, { token: key.key })).status, 200, scope);
  }
  const viewer = await addMember(api, owner.organizationId, 'viewer');
  t.is((await api.request('PATCH', path(model), { ...viewer.as, body: { description: 'x' } })).status, 403);
  const member = await addMember(api, owner.organizationId, 'member');
  t.is((await api.request('PATCH', path(model), { ...member.as, body: { description: 'by a member' } })).status, 200);

  const other = await signup(api);
  t.is((await api.request('PATCH', path(model), { token: other.token, body: { description: 'x' } })).status, 404);
  t.is((await api.request('DELETE', path(model), { token: other.token })).status, 404);
  t.like((await api.request('GET', `${path(model)}?orgId=${owner.organizationId}`, { token: owner.token })).body, { description: 'by a member' });
});

test('a Hub that fails, hangs or cannot be reached is 503 for Hub lookups alone; the catalog and cached entries still answer', async (t) => {
  const flaky = await startHubRecordings();
  // A short timeout, so the Hub that never answers is given up on quickly.
  const isolated = await startTestApi(`${import.meta.filename}-flaky`, { config: flaky.hubConfig(undefined, 3000) });
  t.teardown(async () => {
    await isolated.close();
    await flaky.close();
  });
  const { token, organizationId } = await signup(isolated);
  await isolated.request('POST', `${path(GRANITE)}/validate`, { token, body: { gpu: 'nvidia-l4' } });
  for (const mode of ['error', 'silent'] as const) {
    flaky.mode = mode;
    const started = Date.now();
    const res = await isolated.request('GET', `${path(PHI_MOE)}?orgId=${organizationId}`, { token });
    t.is(res.status, 503, mode);
    t.is(res.body.code, 'SERVICE_UNAVAILABLE');
    t.regex(res.body.message, mode === 'error' ? /Hugging Face Hub could not describe .*: it answered 503/ : /did not answer in time/);
    t.true(Date.now() - started < 5000, 'a short timeout');
    t.is((await isolated.request('POST', `${path(PHI_MOE)}/validate`, { token, body: { gpu: 'nvidia-l4' } })).status, 503);
    t.is((await isolated.request('GET', `${path('meta-llama/Llama-3.1-8B-Instruct')}?orgId=${organizationId}`, { token })).status, 200);
    t.is((await isolated.request('GET', `/v1/models/search?orgId=${organizationId}&q=granite`, { token })).status, 200);
    t.like((await isolated.request('GET', `${path(GRANITE)}?orgId=${organizationId}`, { token })).body, { source: 'organization', layers: 40 });
  }
  // The API's test default: no Hub at all.
  const { token: t2, organizationId: o2 } = await signup(api);
  const unreachable = await startTestApi(`${import.meta.filename}-nohub`);
  t.teardown(() => unreachable.close());
  const u = await signup(unreachable);
  t.is((await unreachable.request('GET', `${path(GRANITE)}?orgId=${u.organizationId}`, { token: u.token })).status, 503);
  t.is((await api.request('GET', `${path(GRANITE)}?orgId=${o2}`, { token: t2 })).status, 200);
});

test('deploying a Hub model sizes it with the Hub\'s facts and adds it to the organization\'s models; one the Hub lacks is INVALID_MODEL', async (t) => {
  const { token, organizationId } = await signup(api);
  const create = (body: Record<string, unknown>) => api.request('POST', '/v1/deployments', { token, body: { name: 'granite', runtime: 'vllm', gpu: 'nvidia-l4', model: GRANITE, ...body } });
  const created = await create({});
  t.is(created.status, 201, JSON.stringify(created.body));
  // 21.6 GB usable - 15.22 GB weights - 1.5 GB runtime leave 4.88 GB of KV cache at 160 KiB a token: 31,996 tokens, 31 x 1024.
  t.like((await api.request('GET', `/api/deployments/${created.body.id}`, { token })).body.data, { gpusPerReplica: 1, contextLength: 31_744 });
  t.like((await search(token, organizationId, 'granite'))[0], { id: GRANITE, source: 'organization' });
  // Now in use: the entry stays.
  t.is((await api.request('DELETE', path(GRANITE), { token })).status, 409);

  // 41.9B parameters do not fit one L4: refused before anything is created, with the arithmetic.
  const moe = await create({ name: 'moe', model: PHI_MOE, gpusPerReplica: 1 });
  t.is(moe.status, 422);
  t.regex(moe.body.message, /^Invalid field gpusPerReplica: .*weights 78\.04 GB/);
  const missing = await create({ name: 'ghost', model: 'someone/unheard-of' });
  t.is(missing.status, 400);
  t.is(missing.body.code, 'INVALID_MODEL');
  t.regex(missing.body.message, /not found on the Hugging Face Hub/);
  // Locations Kiln cannot read run as asked, and join the organization's models too.
  const stored = await create({ name: 'stored', model: 'pvc://model-store/granite-ft', gpusPerReplica: 2 });
  t.is(stored.status, 201);
  t.like((await search(token, organizationId, 'granite-ft'))[0], { id: 'pvc://model-store/granite-ft', source: 'organization' });
});

test('facts() and remember(), as the deployments service calls them: catalog, registry, Hub, unknown, and 503 without a Hub', async (t) => {
  const { organizationId, userId } = await signup(api);
  const principal: Principal = {
    kind: 'session', userId, organizationId, plan: 'free', role: 'owner', permissions: ROLE_PERMISSIONS.owner, scope: 'full_access', platformAdmin: false,
  };
  const cursors = createCursorCodec(randomBytes(32));
  const models = createModelService({ cursors, hub: createHubClient(hub.hubConfig().hub) });
  const em = () => api.orm.em.fork();
  t.like(await models.facts(em(), principal, 'hf://meta-llama/llama-3.1-8b-instruct'), { id: 'meta-llama/Llama-3.1-8B-Instruct', layers: 32 });
  t.like(await models.facts(em(), principal, `${GRANITE}@main`), { id: `${GRANITE}@main`, parametersBillion: 8.17, layers: 40, kvHeads: 8, headSize: 128, contextLength: 131072 });
  t.is(await models.facts(em(), principal, 's3://acme-models/llama'), undefined);
  t.is(await models.facts(em(), principal, LLAMA_3), undefined, 'a gated model\'s shape is unknown without a token');
  await t.throwsAsync(models.facts(em(), principal, 'someone/unheard-of'), { instanceOf: NotFoundError });
  await t.throwsAsync(models.facts(em(), principal, 'not a model'), { instanceOf: InvalidModelError });

  // remember: idempotent, whatever the case of a Hub id, keeping the facts just looked up; the catalog's models join no registry.
  await models.facts(em(), principal, GRANITE);
  for (const model of [GRANITE, GRANITE.toUpperCase(), 'meta-llama/Llama-3.1-8B-Instruct', 's3://acme-models/llama']) await models.remember(em(), principal, model);
  const { rows } = await api.pool.query(`select reference, facts is not null as "hasFacts" from organization_model where organization_id = $1 order by reference`, [organizationId]);
  t.deepEqual(rows, [{ reference: GRANITE, hasFacts: true }, { reference: 's3://acme-models/llama', hasFacts: false }]);

  // Without a Hub: the registry's cached facts still answer; a Hub model in no registry is 503.
  const offline = createModelService({ cursors, hub: createHubClient({ endpoint: 'http://127.0.0.1:9', token: undefined, timeoutMs: 1000 }) });
  t.like(await offline.facts(em(), principal, GRANITE), { layers: 40 });
  await t.throwsAsync(offline.facts(em(), principal, PHI_MOE), { instanceOf: ServiceUnavailableError, message: /could not be reached/ });
});

test('KILN_HF_ENDPOINT, KILN_HF_TOKEN and KILN_HF_TIMEOUT_MS configure the Hub; the default is huggingface.co', async (t) => {
  const dataDir = join(process.env.KILN_TEST_DATA_DIR ?? tmpdir(), 'hub-config');
  t.deepEqual((await loadConfig('api', { DATA_DIR: dataDir })).hub, { endpoint: 'https://huggingface.co', token: undefined, timeoutMs: 5000 });
  t.deepEqual((await loadConfig('api', { DATA_DIR: dataDir, KILN_HF_ENDPOINT: 'https://hub.example.com/', KILN_HF_TOKEN: 'hf_x', KILN_HF_TIMEOUT_MS: '2000' })).hub,
    { endpoint: 'https://hub.example.com', token: 'hf_x', timeoutMs: 2000 });
  await t.throwsAsync(loadConfig('api', { DATA_DIR: dataDir, KILN_HF_ENDPOINT: 'ftp://hub' }), { message: /KILN_HF_ENDPOINT/ });
  await t.throwsAsync(loadConfig('api', { DATA_DIR: dataDir, KILN_HF_TIMEOUT_MS: '0' }), { message: /KILN_HF_TIMEOUT_MS/ });
});

test('a deployment of a model the organization gave defaults takes them where its request is silent; the request wins where it speaks', async (t) => {
  const { token } = await signup(api);
  // Validating joins the registry; then the organization sets how it serves the model by default.
  t.is((await api.request('POST', `${path(GRANITE)}/validate`, { token, body: { gpu: 'nvidia-h100-80gb' } })).status, 200);
  const patched = await api.request('PATCH', path(GRANITE), { token, body: { defaultVllmArgs: ['--enable-prefix-caching'], defaultContextLength: 8192 } });
  t.is(patched.status, 200);
  const deploy = (name: string, extra: Record<string, unknown> = {}) =>
    api.request('POST', '/api/deployments', { token, body: { name, model: GRANITE, runtime: 'vllm', gpu: 'nvidia-h100-80gb', ...extra } });
  const read = async (id: string) => (await api.request('GET', `/api/deployments/${id}`, { token })).body.data;

  const silent = await deploy('granite');
  t.is(silent.status, 201);
  t.like(await read(silent.body.data.id), { contextLength: 8192, vllmArgs: ['--enable-prefix-caching'], gpusPerReplica: 1 });

  const speaking = await deploy('granite-long', { contextLength: 16_384, vllmArgs: ['--enforce-eager'] });
  t.like(await read(speaking.body.data.id), { contextLength: 16_384, vllmArgs: ['--enforce-eager'] });

  // The dry run settles the same way.
  const dryRun = await api.request('POST', '/v1/deployments/validate?preview=false', { token, body: { name: 'granite-dry', model: GRANITE, runtime: 'vllm', gpu: 'nvidia-h100-80gb' } });
  t.like(dryRun.body.deployment, { contextLength: 8192, vllmArgs: ['--enable-prefix-caching'] });
});
