// Deployment templates: catalog presets, creation, versions, stars, previews with cost, deploying (as
// POST /v1/deployments does), sharing a deployment, outdated deployments and their upgrade, template update
// notifications, deleting one (its deployments keep running); scopes, missing credentials and other
// organizations' templates.
import test from 'ava';
import { GPU_TYPES, findGpuType } from '../../catalog/gpu-types.ts';
import { smallestGpuCount } from '../../catalog/model-fit.ts';
import { MODELS } from '../../catalog/models.ts';
import { addMember, createApiKey, desiredStatesSent, signup, type TestApi } from '../support/control-plane.ts';
import { startHubApi } from '../support/hub-recordings.ts';

let api: TestApi;
let close: () => Promise<void>;
test.before(async () => {
  ({ api, close } = await startHubApi(import.meta.filename));
});
test.after.always(() => close?.());

type User = Awaited<ReturnType<typeof signup>>;

const LLAMA_8B = 'meta-llama/Llama-3.1-8B-Instruct';
const configuration = (change: Record<string, unknown> = {}) => ({ model: LLAMA_8B, gpu: 'nvidia-l4', ...change });

async function createTemplate(user: User, body: Record<string, unknown> = {}) {
  const res = await api.request('POST', '/v1/templates/deploy', { token: user.token, body: { name: 'llama chat', configuration: configuration(), ...body } });
  if (res.status !== 201) throw new Error(`template creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; name: string; latestVersion: number; configuration: Record<string, unknown> };
}

async function listAll(user: User, query = '', limit = 7) {
  const items: Array<Record<string, unknown> & { id: string }> = [];
  let cursor: string | null = null;
  do {
    const res = await api.request('GET', `/v1/templates/deploy?orgId=${user.organizationId}&limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: user.token });
    if (res.status !== 200) throw new Error(`list failed: ${res.status} ${JSON.stringify(res.body)}`);
    items.push(...res.body.data);
    cursor = res.body.pagination.nextCursor;
  } while (cursor);
  return items;
}

test('catalog presets: one per chat model that one GPU holds, on the cheapest GPU type that does', async (t) => {
  const user = await signup(api, 'presets');
  const presets = (await listAll(user)).filter((item) => item.source === 'catalog');
  const expected = MODELS.filter((m) => m.task === 'chat' && GPU_TYPES.some((g) => smallestGpuCount(m, g, Math.min(4096, m.contextLength)) === 1));
  t.true(expected.length >= 10, 'the catalog has many chat models one GPU holds');
  t.deepEqual(presets.map((p) => (p.configuration as { model: string }).model).sort(), expected.map((m) => m.id).sort());
  const llama = presets.find((p) => (p.configuration as { model: string }).model === LLAMA_8B)!;
  // 16 GB of 16-bit weights: too much for a 16 GB T4, the L4 is the cheapest that holds it.
  t.like(llama, { id: 'preset_meta-llama-llama-3-1-8b-instruct', source: 'catalog', visibility: 'public', owned: false, latestVersion: 1, starred: false, stars: 0,
    configuration: { gpu: 'nvidia-l4', gpusPerReplica: 1, replicas: 1, dtype: 'auto', vllmArgs: [] } });
  t.true((llama.configuration as { contextLength: number }).contextLength >= 4096);
  t.false(presets.some((p) => /70B|embed/i.test((p.configuration as { model: string }).model)), 'no 70B model (one GPU cannot hold it), no embedding model');
});

test('POST /v1/templates/deploy creates a private template whose first version is settled as a deployment would be', async (t) => {
  const user = await signup(api, 'creator');
  const res = await api.request('POST', '/v1/templates/deploy', {
    token: user.token, body: { name: 'team chat', description: 'Our chat model', configuration: configuration({ maxReplicas: 3, vllmArgs: ['--enable-prefix-caching'] }), notes: 'first cut' },
  });
  t.is(res.status, 201);
  t.regex(res.body.id, /^tpl_[0-9a-z]{20}$/);
  t.like(res.body, {
    name: 'team chat', description: 'Our chat model', visibility: 'private', source: 'organization', owned: true, latestVersion: 1, starred: false, stars: 0,
    configuration: { model: LLAMA_8B, gpu: 'nvidia-l4', gpusPerReplica: 1, replicas: 1, minReplicas: 1, maxReplicas: 3, dtype: 'auto', vllmArgs: ['--enable-prefix-caching'] },
  });
  t.true(res.body.configuration.contextLength > 4096, 'the longest context one L4 holds');
  const versions = await api.request('GET', `/v1/templates/${res.body.id}/versions`, { token: user.token });
  t.is(versions.status, 200);
  t.like(versions.body, { data: [{ templateId: res.body.id, version: 1, notes: 'first cut', configuration: res.body.configuration }], pagination: { hasMore: false } });
  const mine = (await listAll(user)).filter((item) => item.owned);
  t.deepEqual(mine.map((item) => item.id), [res.body.id]);
});

test('bad template input: 400 for missing or mistyped fields, 422 for broken rules, 409 for a name taken, INVALID_MODEL for an unloadable model', async (t) => {
  const user = await signup(api, 'bad-input');
  const post = (body: unknown) => api.request('POST', '/v1/templates/deploy', { token: user.token, body });
  const missing = await post({ name: 'x' });
  t.is(missing.status, 400);
  t.is(missing.body.code, 'INVALID_REQUEST');
  t.regex(missing.body.message, /configuration/);
  // Types and choices the schema knows: 400, as POST /v1/deployments answers them.
  for (const change of [{ replicas: 'two' }, { gpusPerReplica: 3 }]) t.is((await post({ name: 'x', configuration: configuration(change) })).status, 400, JSON.stringify(change));
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ gpu: 'nvidia-b200' }, 'configuration.gpu'],
    [{ replicas: 3, maxReplicas: 2 }, 'replicas'],
    [{ vllmArgs: ['--model=other'] }, 'configuration.vllmArgs'],
    // A 70B model's 16-bit weights need more than one 24 GB L4.
    [{ model: 'meta-llama/Llama-3.1-70B-Instruct', gpusPerReplica: 1 }, 'gpusPerReplica'],
  ];
  for (const [change, field] of cases) {
    const res = await post({ name: 'x', configuration: configuration(change) });
    t.is(res.status, 422, JSON.stringify(change));
    t.is(res.body.code, 'VALIDATION_ERROR');
    t.regex(res.body.message, new RegExp(field.split('.').at(-1)!), JSON.stringify(change));
  }
  const model = await post({ name: 'x', configuration: configuration({ model: 'not a model' }) });
  t.is(model.status, 400);
  t.is(model.body.code, 'INVALID_MODEL');
  await createTemplate(user, { name: 'taken' });
  const taken = await post({ name: 'taken', configuration: configuration() });
  t.is(taken.status, 409);
  t.is(taken.body.code, 'RESOURCE_EXISTS');
});

// Serial, so the Hub stand-in answers within the API's short test timeout (a Hub that does not answer leaves the size to the request).
test.serial('a model outside the catalog is sized with what the Hub says of it, as a deployment of it would be', async (t) => {
  const user = await signup(api, 'hub-model');
  const granite = await createTemplate(user, { name: 'granite', configuration: configuration({ model: 'ibm-granite/granite-3.1-8b-instruct' }) });
  t.like(granite.configuration, { model: 'ibm-granite/granite-3.1-8b-instruct', gpusPerReplica: 1 });
  t.true((granite.configuration.contextLength as number) >= 4096, 'the longest context one L4 holds, from the recorded config.json');
  const deployed = await api.request('POST', `/v1/templates/${granite.id}/deploy`, { token: user.token, body: { name: 'granite' } });
  t.is(deployed.status, 201);
  const read = (await api.request('GET', `/api/deployments/${deployed.body.id}`, { token: user.token })).body.data;
  t.like(read, { gpusPerReplica: 1, contextLength: granite.configuration.contextLength });
  // A 42B mixture of experts: one 24 GB L4 cannot hold its weights.
  const moe = await api.request('POST', '/v1/templates/deploy', { token: user.token, body: { name: 'moe', configuration: configuration({ model: 'microsoft/Phi-3.5-MoE-instruct', gpusPerReplica: 1 }) } });
  t.is(moe.status, 422);
  t.regex(moe.body.message, /^Invalid field gpusPerReplica: /);
});

test('versions added at once are numbered without gaps or twins: each is added, or 409 asking to send it again', async (t) => {
  const user = await signup(api, 'race');
  const { id } = await createTemplate(user);
  const answers = await Promise.all([2, 3, 4, 5].map((maxReplicas) =>
    api.request('POST', `/v1/templates/${id}/new-version`, { token: user.token, body: { configuration: { maxReplicas } } })));
  t.true(answers.every((res) => res.status === 201 || res.status === 409), answers.map((res) => res.status).join());
  const added = answers.filter((res) => res.status === 201);
  t.true(added.length >= 1);
  t.deepEqual(added.map((res) => res.body.version).sort(), added.map((_, i) => i + 2));
  const versions = (await api.request('GET', `/v1/templates/${id}/versions?limit=100`, { token: user.token })).body.data.map((v: { version: number }) => v.version);
  t.deepEqual(versions, Array.from({ length: added.length + 1 }, (_, i) => added.length + 1 - i));
});

test('a private template is invisible to another organization: every row answers 404, and its list leaves it out', async (t) => {
  const owner = await signup(api, 'private-owner');
  const other = await signup(api, 'private-other');
  const { id } = await createTemplate(owner);
  const rows: Array<[string, string, unknown?]> = [
    ['GET', `/v1/templates/${id}/versions`],
    ['GET', `/v1/templates/${id}/star?orgId=${other.organizationId}`],
    ['POST', `/v1/templates/${id}/star`, {}],
    ['DELETE', `/v1/templates/${id}/star`],
    ['POST', `/v1/templates/${id}/new-version`, { configuration: { replicas: 2, maxReplicas: 2 } }],
    ['GET', `/v1/templates/${id}/deploy?orgId=${other.organizationId}`],
    ['POST', `/v1/templates/${id}/deploy`, { name: 'stolen' }],
  ];
  for (const [method, path, body] of rows) {
    const res = await api.request(method, path, { token: other.token, body });
    t.is(res.status, 404, `${method} ${path}`);
    t.is(res.body.code, 'NOT_FOUND');
  }
  t.false((await listAll(other)).some((item) => item.id === id));
  t.is((await api.pool.query('SELECT count(*)::int AS n FROM deployment WHERE organization_id = $1', [other.organizationId])).rows[0].n, 0);
});

test('a public template: everyone reads, stars, previews and deploys it; only its organization adds versions (403)', async (t) => {
  const owner = await signup(api, 'public-owner');
  const other = await signup(api, 'public-other');
  const { id } = await createTemplate(owner, { name: 'shared llama', visibility: 'public' });
  const listed = (await listAll(other)).find((item) => item.id === id);
  t.like(listed, { name: 'shared llama', visibility: 'public', source: 'organization', owned: false });
  t.is((await api.request('GET', `/v1/templates/${id}/versions`, { token: other.token })).status, 200);
  t.is((await api.request('GET', `/v1/templates/${id}/deploy?orgId=${other.organizationId}`, { token: other.token })).status, 200);
  t.is((await api.request('POST', `/v1/templates/${id}/deploy`, { token: other.token, body: { name: 'borrowed' } })).status, 201);
  const change = await api.request('POST', `/v1/templates/${id}/new-version`, { token: other.token, body: { configuration: { maxReplicas: 4 } } });
  t.is(change.status, 403);
  t.is(change.body.code, 'INSUFFICIENT_PERMISSIONS');
  t.is((await api.request('GET', `/v1/templates/${id}/versions`, { token: owner.token })).body.data.length, 1, 'no version was added');
});

test('new versions are numbered from the latest, keep what they do not change, and leave earlier versions as they were', async (t) => {
  const user = await signup(api, 'versions');
  const { id, configuration: first } = await createTemplate(user);
  const second = await api.request('POST', `/v1/templates/${id}/new-version`, { token: user.token, body: { configuration: { maxReplicas: 4, dtype: 'bfloat16' }, notes: 'room to grow' } });
  t.is(second.status, 201);
  t.like(second.body, { templateId: id, version: 2, notes: 'room to grow', configuration: { ...first, maxReplicas: 4, dtype: 'bfloat16' } });
  // A new GPU type is sized afresh: an H100 holds a longer context than an L4.
  const third = await api.request('POST', `/v1/templates/${id}/new-version`, { token: user.token, body: { configuration: { gpu: 'nvidia-h100-80gb' } } });
  t.like(third.body, { version: 3, configuration: { gpu: 'nvidia-h100-80gb', gpusPerReplica: 1, maxReplicas: 4 } });
  t.true(third.body.configuration.contextLength > (first.contextLength as number));

  const page1 = await api.request('GET', `/v1/templates/${id}/versions?limit=2`, { token: user.token });
  t.deepEqual(page1.body.data.map((v: { version: number }) => v.version), [3, 2]);
  t.true(page1.body.pagination.hasMore);
  const page2 = await api.request('GET', `/v1/templates/${id}/versions?limit=2&cursor=${encodeURIComponent(page1.body.pagination.nextCursor)}`, { token: user.token });
  t.deepEqual(page2.body.data.map((v: { version: number }) => v.version), [1]);
  t.deepEqual(page2.body.data[0].configuration, first, 'version 1 is as it was');
  const listed = (await listAll(user)).find((item) => item.id === id);
  t.like(listed, { latestVersion: 3, configuration: { gpu: 'nvidia-h100-80gb' } });

  t.is((await api.request('GET', `/v1/templates/${id}/versions?limit=101`, { token: user.token })).status, 400);
  t.is((await api.request('GET', `/v1/templates/${id}/versions?cursor=forged`, { token: user.token })).status, 400);
  const bad = await api.request('POST', `/v1/templates/${id}/new-version`, { token: user.token, body: { configuration: { replicas: 9, maxReplicas: 2 } } });
  t.is(bad.status, 422);
  t.is((await api.request('POST', `/v1/templates/${id}/new-version`, { token: user.token, body: { configuration: { replicas: '2' } } })).status, 400);
  t.is((await api.request('POST', '/v1/templates/tpl_00000000000000000000/new-version', { token: user.token, body: { configuration: {} } })).status, 404);
  t.is((await api.request('POST', '/v1/templates/preset_meta-llama-llama-3-1-8b-instruct/new-version', { token: user.token, body: { configuration: {} } })).status, 403);
});

test('stars: per user, counted across organizations, idempotent, and starred templates come first in the list', async (t) => {
  const owner = await signup(api, 'star-owner');
  const fan = await signup(api, 'star-fan');
  const { id } = await createTemplate(owner, { name: 'zz last by name', visibility: 'public' });
  const status = (user: User) => api.request('GET', `/v1/templates/${id}/star?orgId=${user.organizationId}`, { token: user.token });
  t.deepEqual((await status(fan)).body, { templateId: id, starred: false, stars: 0 });
  t.deepEqual((await api.request('POST', `/v1/templates/${id}/star`, { token: fan.token, body: {} })).body, { templateId: id, starred: true, stars: 1 });
  t.deepEqual((await api.request('POST', `/v1/templates/${id}/star`, { token: fan.token, body: {} })).body, { templateId: id, starred: true, stars: 1 }, 'starring again changes nothing');
  t.deepEqual((await api.request('POST', `/v1/templates/${id}/star`, { token: owner.token })).body, { templateId: id, starred: true, stars: 2 });
  t.deepEqual((await status(fan)).body, { templateId: id, starred: true, stars: 2 });
  const first = (await api.request('GET', `/v1/templates/deploy?orgId=${fan.organizationId}&limit=1`, { token: fan.token })).body.data[0];
  t.like(first, { id, starred: true, stars: 2 }, 'starred first, though last by name');
  // A preset can be starred too.
  const preset = 'preset_meta-llama-llama-3-1-8b-instruct';
  t.like((await api.request('POST', `/v1/templates/${preset}/star`, { token: fan.token, body: {} })).body, { starred: true, stars: 1 });
  const firstTwo = (await api.request('GET', `/v1/templates/deploy?orgId=${fan.organizationId}&limit=2`, { token: fan.token })).body.data.map((item: { id: string }) => item.id);
  t.deepEqual(firstTwo.sort(), [id, preset].sort());
  t.deepEqual((await api.request('DELETE', `/v1/templates/${id}/star`, { token: fan.token })).body, { templateId: id, starred: false, stars: 1 });
  t.is((await api.request('GET', `/v1/templates/${id}/star`, { token: fan.token })).status, 400, 'orgId is required');
  t.is((await api.request('GET', `/v1/templates/tpl_00000000000000000000/star?orgId=${fan.organizationId}`, { token: fan.token })).status, 404);
  const unknownField = await api.request('POST', `/v1/templates/${id}/star`, { token: fan.token, body: { starred: true } });
  t.is(unknownField.status, 400);
  t.regex(unknownField.body.message, /starred/);
});

// Other tests add public templates meanwhile: the order is checked on the presets and the user's own.
const stable = (items: Array<Record<string, unknown> & { id: string }>) => items.filter((item) => item.source === 'catalog' || item.owned);

test('the list pages through presets and templates in one order: starred, then name, each once', async (t) => {
  const user = await signup(api, 'pages');
  for (const name of ['Aardvark', 'Llama mine', 'zebra']) await createTemplate(user, { name });
  const starredPreset = 'preset_qwen-qwen2-5-7b-instruct';
  await api.request('POST', `/v1/templates/${starredPreset}/star`, { token: user.token, body: {} });
  const all = stable(await listAll(user, '', 100));
  for (const limit of [1, 3, 7]) t.deepEqual(stable(await listAll(user, '', limit)).map((item) => item.id), all.map((item) => item.id), `limit ${limit}`);
  t.is(all[0]!.id, starredPreset);
  const names = all.slice(1).map((item) => item.name as string);
  t.deepEqual(names, [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  t.is(new Set(all.map((item) => item.id)).size, all.length);
  t.true(all.some((item) => item.name === 'Aardvark') && all.some((item) => item.name === 'zebra'));
  const bad = await api.request('GET', `/v1/templates/deploy?orgId=${user.organizationId}&cursor=forged`, { token: user.token });
  t.is(bad.status, 400);
  t.is((await api.request('GET', `/v1/templates/deploy?orgId=${user.organizationId}&limit=0`, { token: user.token })).status, 400);
});

test('GET /v1/models/templates and /api/models/templates: the same list, narrowed to a model with `model`', async (t) => {
  const user = await signup(api, 'model-templates');
  await createTemplate(user, { name: 'my qwen', configuration: { model: 'Qwen/Qwen2.5-7B-Instruct', gpu: 'nvidia-l4' } });
  const v1 = await api.request('GET', `/v1/models/templates?orgId=${user.organizationId}&model=qwen/qwen2.5-7b-instruct&limit=100`, { token: user.token });
  t.is(v1.status, 200);
  t.deepEqual(v1.body.data.map((item: { source: string; configuration: { model: string } }) => [item.source, item.configuration.model]).sort(),
    [['catalog', 'Qwen/Qwen2.5-7B-Instruct'], ['organization', 'Qwen/Qwen2.5-7B-Instruct']]);
  const platform = await api.request('GET', '/api/models/templates?limit=100', { token: user.token });
  t.is(platform.status, 200);
  t.like(platform.body, { success: true });
  t.deepEqual(stable(platform.body.data).map((item) => item.id), stable(await listAll(user, '', 100)).map((item) => item.id));
  t.is((await api.request('GET', '/v1/models/templates', { token: user.token })).status, 400, 'orgId is required');
});

test('GET /v1/templates/{id}/deploy previews what a deploy creates and its hourly cost (GPU price x GPUs per replica x replicas)', async (t) => {
  const user = await signup(api, 'preview');
  const { id, configuration: first } = await createTemplate(user, { configuration: configuration({ gpu: 'nvidia-h100-80gb', gpusPerReplica: 2, replicas: 3, maxReplicas: 5 }) });
  t.is((await api.request('POST', `/v1/templates/${id}/new-version`, { token: user.token, body: { configuration: { replicas: 1, minReplicas: 1 } } })).status, 201);
  const price = findGpuType('nvidia-h100-80gb')!.hourlyPriceUsd;
  const latest = await api.request('GET', `/v1/templates/${id}/deploy?orgId=${user.organizationId}`, { token: user.token });
  t.is(latest.status, 200);
  t.like(latest.body, {
    templateId: id, version: 2, deployment: { runtime: 'vllm', model: LLAMA_8B, gpu: 'nvidia-h100-80gb', gpusPerReplica: 2, replicas: 1, maxReplicas: 5 },
    gpuType: { id: 'nvidia-h100-80gb', hourlyPriceUsd: price }, gpus: 2, hourlyCostUsd: price * 2, maxHourlyCostUsd: price * 2 * 5,
    credits: { requiredCents: price * 2 * 100, sufficient: true },
  });
  const v1 = await api.request('GET', `/v1/templates/${id}/deploy?orgId=${user.organizationId}&version=1`, { token: user.token });
  t.like(v1.body, { version: 1, deployment: first, gpus: 6, hourlyCostUsd: price * 6 });
  await api.pool.query('UPDATE organization SET credits_cents = 100 WHERE id = $1', [user.organizationId]);
  t.like((await api.request('GET', `/v1/templates/${id}/deploy?orgId=${user.organizationId}`, { token: user.token })).body.credits, { availableCents: 100, sufficient: false });
  const missing = await api.request('GET', `/v1/templates/${id}/deploy?orgId=${user.organizationId}&version=9`, { token: user.token });
  t.is(missing.status, 422);
  t.is(missing.body.code, 'VALIDATION_ERROR');
  t.is((await api.request('GET', `/v1/templates/${id}/deploy?orgId=${user.organizationId}&version=two`, { token: user.token })).status, 400);
  const preset = await api.request('GET', `/v1/templates/preset_meta-llama-llama-3-1-8b-instruct/deploy?orgId=${user.organizationId}`, { token: user.token });
  t.like(preset.body, { version: 1, gpus: 1, hourlyCostUsd: findGpuType('nvidia-l4')!.hourlyPriceUsd });
});

test('POST /v1/templates/{id}/deploy creates the deployment as POST /v1/deployments does, remembering the template version', async (t) => {
  const user = await signup(api, 'deployer');
  const { id } = await createTemplate(user, { configuration: configuration({ maxReplicas: 2, vllmArgs: ['--enable-prefix-caching'] }) });
  const res = await api.request('POST', `/v1/templates/${id}/deploy`, { token: user.token, body: { name: 'from-template' } });
  t.is(res.status, 201);
  t.like(res.body, { name: 'from-template', status: 'pending', templateId: id, templateVersion: 1 });
  t.regex(res.body.id, /^dep_/);
  const read = await api.request('GET', `/api/deployments/${res.body.id}`, { token: user.token });
  t.like(read.body.data, { model: LLAMA_8B, gpu: 'nvidia-l4', gpusPerReplica: 1, maxReplicas: 2, vllmArgs: ['--enable-prefix-caching'], templateId: id, templateVersion: 1 });
  const [sent] = await desiredStatesSent(api, res.body.id);
  t.like(sent, { model: LLAMA_8B, gpu: 'nvidia-l4', maxReplicas: 2, vllmArgs: ['--enable-prefix-caching'] });

  // The deployments' own answers: a name taken, a bad name, no credits.
  const taken = await api.request('POST', `/v1/templates/${id}/deploy`, { token: user.token, body: { name: 'from-template' } });
  t.is(taken.status, 409);
  t.is(taken.body.code, 'RESOURCE_EXISTS');
  t.is((await api.request('POST', `/v1/templates/${id}/deploy`, { token: user.token, body: { name: 'Not_A_Label' } })).status, 422);
  t.is((await api.request('POST', `/v1/templates/${id}/deploy`, { token: user.token, body: {} })).status, 400);
  t.is((await api.request('POST', `/v1/templates/${id}/deploy`, { token: user.token, body: { name: 'old', version: 5 } })).status, 422);
  await api.pool.query('UPDATE organization SET credits_cents = 0 WHERE id = $1', [user.organizationId]);
  const broke = await api.request('POST', `/v1/templates/${id}/deploy`, { token: user.token, body: { name: 'broke' } });
  t.is(broke.status, 402);
  t.is(broke.body.code, 'INSUFFICIENT_CREDITS');
});

test('deploying a template honours Idempotency-Key: a retry replays the first answer, another request under it is 409', async (t) => {
  const user = await signup(api, 'idempotent');
  const { id } = await createTemplate(user);
  const headers = { 'idempotency-key': 'tpl-deploy-1' };
  const first = await api.request('POST', `/v1/templates/${id}/deploy`, { token: user.token, headers, body: { name: 'once' } });
  const again = await api.request('POST', `/v1/templates/${id}/deploy`, { token: user.token, headers, body: { name: 'once' } });
  t.is(first.status, 201);
  t.is(again.status, 201);
  t.is(again.body.id, first.body.id);
  const other = await api.request('POST', `/v1/templates/${id}/deploy`, { token: user.token, headers, body: { name: 'twice' } });
  t.is(other.status, 409);
  t.is(other.body.code, 'IDEMPOTENCY_KEY_REUSED');
  t.is((await api.pool.query('SELECT count(*)::int AS n FROM deployment WHERE organization_id = $1', [user.organizationId])).rows[0].n, 1);
});

test('outdated-templates lists deployments behind their template with what changed; PATCH templateVersion upgrades one', async (t) => {
  const user = await signup(api, 'outdated');
  const { id } = await createTemplate(user);
  const deployed = (await api.request('POST', `/v1/templates/${id}/deploy`, { token: user.token, body: { name: 'behind' } })).body;
  t.deepEqual((await api.request('GET', '/v1/deployments/outdated-templates', { token: user.token })).body, []);
  await api.request('POST', `/v1/templates/${id}/new-version`, { token: user.token, body: { configuration: { maxReplicas: 3, vllmArgs: ['--enable-chunked-prefill'] } } });

  const outdated = await api.request('GET', '/v1/deployments/outdated-templates', { token: user.token });
  t.is(outdated.status, 200);
  t.deepEqual(outdated.body, [{
    deploymentId: deployed.id, deploymentName: 'behind', templateId: id, templateName: 'llama chat', currentVersion: 1, latestVersion: 2,
    changes: [{ field: 'maxReplicas', from: 1, to: 3 }, { field: 'vllmArgs', from: [], to: ['--enable-chunked-prefill'] }],
  }]);

  const before = (await desiredStatesSent(api, deployed.id)).length;
  const upgraded = await api.request('PATCH', `/api/deployments/${deployed.id}`, { token: user.token, body: { templateVersion: 2 } });
  t.is(upgraded.status, 200);
  t.like(upgraded.body.data, { maxReplicas: 3, vllmArgs: ['--enable-chunked-prefill'] });
  t.is((await desiredStatesSent(api, deployed.id)).length, before + 1, 'the upgrade rolls through the workflow');
  t.deepEqual((await api.request('GET', '/v1/deployments/outdated-templates', { token: user.token })).body, []);
  t.like((await api.request('GET', `/api/deployments/${deployed.id}`, { token: user.token })).body.data, { templateId: id, templateVersion: 2 });

  const missing = await api.request('PATCH', `/api/deployments/${deployed.id}`, { token: user.token, body: { templateVersion: 7 } });
  t.is(missing.status, 422);
  t.is(missing.body.error.details.fields[0].field, 'templateVersion');
  const plain = (await api.request('POST', '/v1/deployments', { token: user.token, body: { name: 'plain', model: LLAMA_8B, runtime: 'vllm', gpu: 'nvidia-l4' } })).body;
  t.like((await api.request('GET', `/api/deployments/${plain.id}`, { token: user.token })).body.data, { templateId: null, templateVersion: null });
  const notFromTemplate = await api.request('PATCH', `/api/deployments/${plain.id}`, { token: user.token, body: { templateVersion: 1 } });
  t.is(notFromTemplate.status, 422);
  t.is(notFromTemplate.body.error.details.fields[0].field, 'templateVersion');
  // Another organization sees none of it.
  const other = await signup(api, 'outdated-other');
  t.deepEqual((await api.request('GET', '/v1/deployments/outdated-templates', { token: other.token })).body, []);
});

test('share-as-template captures a deployment as a new template, or as a new version of one the organization owns', async (t) => {
  const user = await signup(api, 'sharer');
  const dep = (await api.request('POST', '/v1/deployments', { token: user.token, body: { name: 'tuned', model: LLAMA_8B, runtime: 'vllm', gpu: 'nvidia-l4', maxReplicas: 2, dtype: 'float16' } })).body;
  const shared = await api.request('POST', `/v1/deployments/${dep.id}/share-as-template`, { token: user.token, body: { name: 'tuned llama', visibility: 'public' } });
  t.is(shared.status, 201);
  t.like(shared.body, { templateName: 'tuned llama', version: 1, configuration: { model: LLAMA_8B, gpu: 'nvidia-l4', maxReplicas: 2, dtype: 'float16' } });
  const templateId = shared.body.templateId;
  t.like((await listAll(await signup(api, 'onlooker'))).find((item) => item.id === templateId), { visibility: 'public', name: 'tuned llama' });

  await api.request('PATCH', `/api/deployments/${dep.id}`, { token: user.token, body: { maxReplicas: 4 } });
  const again = await api.request('POST', `/v1/deployments/${dep.id}/share-as-template`, { token: user.token, body: { templateId, notes: 'more headroom' } });
  t.is(again.status, 201);
  t.like(again.body, { templateId, version: 2, notes: 'more headroom', configuration: { maxReplicas: 4 } });
  t.deepEqual((await api.request('GET', '/v1/deployments/outdated-templates', { token: user.token })).body, [], 'the deployment follows the version it became');
  t.like((await api.request('GET', `/api/deployments/${dep.id}`, { token: user.token })).body.data, { templateId, templateVersion: 2 });

  const noName = await api.request('POST', `/v1/deployments/${dep.id}/share-as-template`, { token: user.token, body: {} });
  t.is(noName.status, 422);
  t.is(noName.body.code, 'VALIDATION_ERROR');
  t.is((await api.request('POST', `/v1/deployments/${dep.id}/share-as-template`, { token: user.token, body: { templateId, name: 'rename' } })).status, 422);
  t.is((await api.request('POST', `/v1/deployments/${dep.id}/share-as-template`, { token: user.token, body: { name: 'tuned llama' } })).status, 409);
  t.is((await api.request('POST', `/v1/deployments/${dep.id}/share-as-template`, { token: user.token, body: { name: 7 } })).status, 400);

  const other = await signup(api, 'share-other');
  const theirs = await api.request('POST', `/v1/deployments/${dep.id}/share-as-template`, { token: other.token, body: { name: 'stolen' } });
  t.is(theirs.status, 404);
  t.is(theirs.body.code, 'DEPLOYMENT_NOT_FOUND');
  const otherDep = (await api.request('POST', '/v1/deployments', { token: other.token, body: { name: 'mine', model: LLAMA_8B, runtime: 'vllm', gpu: 'nvidia-l4' } })).body;
  const privateOne = await createTemplate(user, { name: 'private one' });
  t.is((await api.request('POST', `/v1/deployments/${otherDep.id}/share-as-template`, { token: other.token, body: { templateId: privateOne.id } })).status, 404);
  t.is((await api.request('POST', `/v1/deployments/${otherDep.id}/share-as-template`, { token: other.token, body: { templateId } })).status, 403, 'a public template of another organization');
});

test('template updates: starring and deploying subscribe; a new version notifies every subscriber but its author; PATCH marks seen and unsubscribes', async (t) => {
  const owner = await signup(api, 'updates-owner');
  const fan = await signup(api, 'updates-fan');
  const deployer = await signup(api, 'updates-deployer');
  const { id } = await createTemplate(owner, { name: 'followed', visibility: 'public' });
  await api.request('POST', `/v1/templates/${id}/star`, { token: fan.token, body: {} });
  await api.request('POST', `/v1/templates/${id}/deploy`, { token: deployer.token, body: { name: 'follower' } });
  const updates = (user: User) => api.request('GET', '/v1/notifications/template-updates', { token: user.token });
  t.like((await updates(fan)).body, { subscriptions: [{ templateId: id, templateName: 'followed', reason: 'starred', latestVersion: 1 }], unseen: [] });
  t.like((await updates(deployer)).body, { subscriptions: [{ templateId: id, reason: 'deployed' }] });

  await api.request('POST', `/v1/templates/${id}/new-version`, { token: owner.token, body: { configuration: { maxReplicas: 2 } } });
  const seen = (await updates(fan)).body;
  t.is(seen.unseen.length, 1);
  t.like(seen.unseen[0], { templateId: id, templateName: 'followed', version: 2, previousVersion: 1, changes: [{ field: 'maxReplicas', from: 1, to: 2 }] });
  t.regex(seen.unseen[0].id, /^unt_/);
  t.is((await updates(deployer)).body.unseen.length, 1);
  t.deepEqual((await updates(owner)).body.unseen, [], 'the author is not told of their own version');
  // The general per-user store holds them, with their kind.
  const { rows } = await api.pool.query('SELECT kind, organization_id, read_at FROM user_notification WHERE user_id = $1', [fan.userId]);
  t.deepEqual(rows, [{ kind: 'template.updated', organization_id: fan.organizationId, read_at: null }]);

  const marked = await api.request('PATCH', '/v1/notifications/template-updates', { token: fan.token, body: { seen: [seen.unseen[0].id] } });
  t.is(marked.status, 200);
  t.deepEqual(marked.body.unseen, []);
  t.is((await api.request('PATCH', '/v1/notifications/template-updates', { token: fan.token, body: { seen: [seen.unseen[0].id] } })).status, 200, 'marking again changes nothing');
  t.deepEqual((await api.request('PATCH', '/v1/notifications/template-updates', { token: deployer.token, body: { seen: 'all' } })).body.unseen, []);

  const left = await api.request('PATCH', '/v1/notifications/template-updates', { token: fan.token, body: { unsubscribe: [id] } });
  t.deepEqual(left.body.subscriptions, []);
  await api.request('POST', `/v1/templates/${id}/new-version`, { token: owner.token, body: { configuration: { maxReplicas: 3 } } });
  t.deepEqual((await updates(fan)).body.unseen, [], 'unsubscribed: no more updates');
  t.is((await updates(deployer)).body.unseen.length, 1);
  const back = await api.request('PATCH', '/v1/notifications/template-updates', { token: fan.token, body: { subscribe: [id] } });
  t.like(back.body, { subscriptions: [{ templateId: id, reason: 'subscribed', latestVersion: 3 }] });
});

test('template updates: bad input is 400 or 422 naming the field; another organization\'s private template or update is unknown', async (t) => {
  const owner = await signup(api, 'updates-bad');
  const other = await signup(api, 'updates-bad-other');
  const { id } = await createTemplate(owner, { name: 'hidden' });
  const patch = (user: User, body: unknown) => api.request('PATCH', '/v1/notifications/template-updates', { token: user.token, body });
  const empty = await patch(owner, {});
  t.is(empty.status, 422);
  t.regex(empty.body.message, /subscribe, unsubscribe or seen/);
  t.is((await patch(owner, { subscribe: 'all' })).status, 400);
  const unknownTemplate = await patch(other, { subscribe: [id] });
  t.is(unknownTemplate.status, 422);
  t.is(unknownTemplate.body.message, 'Invalid field subscribe.0: no such template');
  const preset = await patch(owner, { subscribe: ['preset_meta-llama-llama-3-1-8b-instruct'] });
  t.is(preset.status, 422);
  // An update of another user's is none of theirs.
  const fan = await signup(api, 'updates-bad-fan');
  const shared = await createTemplate(owner, { name: 'shared', visibility: 'public' });
  await api.request('POST', `/v1/templates/${shared.id}/star`, { token: fan.token, body: {} });
  await api.request('POST', `/v1/templates/${shared.id}/new-version`, { token: owner.token, body: { configuration: { maxReplicas: 2 } } });
  const [update] = (await api.request('GET', '/v1/notifications/template-updates', { token: fan.token })).body.unseen;
  const foreign = await patch(other, { seen: [update.id] });
  t.is(foreign.status, 422);
  t.is(foreign.body.message, 'Invalid field seen.0: no such template update of yours');
  t.is((await api.request('GET', '/v1/notifications/template-updates', { token: fan.token })).body.unseen.length, 1, 'still unseen');
  // A request refused changes nothing of what it asked besides.
  const mixed = await patch(fan, { seen: [update.id, 'unt_00000000000000000000'], unsubscribe: [shared.id] });
  t.is(mixed.status, 422);
  t.is(mixed.body.message, 'Invalid field seen.1: no such template update of yours');
  const after = (await api.request('GET', '/v1/notifications/template-updates', { token: fan.token })).body;
  t.is(after.unseen.length, 1);
  t.deepEqual(after.subscriptions.map((s: { templateId: string }) => s.templateId), [shared.id]);
});

test('DELETE /v1/templates/{id}: its organization deletes it with its versions, stars and subscriptions; deployments made from it keep running as they are', async (t) => {
  const owner = await signup(api, 'delete-owner');
  const fan = await signup(api, 'delete-fan');
  const { id } = await createTemplate(owner, { name: 'retired', visibility: 'public', configuration: configuration({ maxReplicas: 2 }) });
  const mine = (await api.request('POST', `/v1/templates/${id}/deploy`, { token: owner.token, body: { name: 'kept' } })).body;
  await api.request('POST', `/v1/templates/${id}/star`, { token: fan.token, body: {} });
  const theirs = (await api.request('POST', `/v1/templates/${id}/deploy`, { token: fan.token, body: { name: 'borrowed' } })).body;
  await api.request('POST', `/v1/templates/${id}/new-version`, { token: owner.token, body: { configuration: { maxReplicas: 3 } } });
  t.is((await api.request('GET', '/v1/deployments/outdated-templates', { token: owner.token })).body.length, 1, 'behind its template before');

  // Only its organization deletes it: another's public template is 403, as a new version of it is.
  const refused = await api.request('DELETE', `/v1/templates/${id}`, { token: fan.token });
  t.is(refused.status, 403);
  t.is(refused.body.code, 'INSUFFICIENT_PERMISSIONS');
  const deleted = await api.request('DELETE', `/v1/templates/${id}`, { token: owner.token });
  t.is(deleted.status, 200);
  t.deepEqual(deleted.body, { id, deleted: true });

  t.is((await api.request('DELETE', `/v1/templates/${id}`, { token: owner.token })).status, 404, 'gone');
  t.is((await api.request('GET', `/v1/templates/${id}/versions`, { token: owner.token })).status, 404);
  t.is((await api.request('GET', `/v1/templates/${id}/star?orgId=${fan.organizationId}`, { token: fan.token })).status, 404);
  t.is((await api.request('POST', `/v1/templates/${id}/deploy`, { token: fan.token, body: { name: 'too-late' } })).status, 404);
  t.false((await listAll(fan)).some((item) => item.id === id));
  for (const [table, column] of [['template_version', 'template_id'], ['template_star', 'template_id'], ['template_subscription', 'template_id'], ['template', 'id']]) {
    t.is((await api.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [id])).rows[0].n, 0, table);
  }

  // The deployments keep their own configuration, and what reads of the template's notices does not break.
  t.like((await api.request('GET', `/api/deployments/${mine.id}`, { token: owner.token })).body.data, { name: 'kept', model: LLAMA_8B, maxReplicas: 2, templateId: id, templateVersion: 1 });
  t.like((await api.request('GET', `/api/deployments/${theirs.id}`, { token: fan.token })).body.data, { name: 'borrowed', maxReplicas: 2 });
  const outdated = await api.request('GET', '/v1/deployments/outdated-templates', { token: owner.token });
  t.is(outdated.status, 200);
  t.deepEqual(outdated.body, [], 'a template that is gone has no newer version to offer');
  const updates = await api.request('GET', '/v1/notifications/template-updates', { token: fan.token });
  t.is(updates.status, 200);
  t.deepEqual(updates.body.subscriptions, []);
  const upgrade = await api.request('PATCH', `/api/deployments/${mine.id}`, { token: owner.token, body: { templateVersion: 2 } });
  t.is(upgrade.status, 422);
  t.is(upgrade.body.error.details.fields[0].field, 'templateVersion');
  // Its name is free again.
  t.is((await api.request('POST', '/v1/templates/deploy', { token: owner.token, body: { name: 'retired', configuration: configuration() } })).status, 201);
});

test('DELETE /v1/templates/{id}: catalog presets are 403; unknown ids and another organization\'s private template 404; viewers and keys without templates:write 403', async (t) => {
  const owner = await signup(api, 'delete-rules');
  const other = await signup(api, 'delete-rules-other');
  const { id } = await createTemplate(owner, { name: 'private one' });
  const preset = await api.request('DELETE', '/v1/templates/preset_meta-llama-llama-3-1-8b-instruct', { token: owner.token });
  t.is(preset.status, 403);
  t.regex(preset.body.message, /catalog preset/);
  t.is((await api.request('DELETE', '/v1/templates/tpl_unknown', { token: owner.token })).status, 404);
  t.is((await api.request('DELETE', `/v1/templates/${'x'.repeat(65)}`, { token: owner.token })).status, 400, 'an id longer than any is a malformed path');
  const foreign = await api.request('DELETE', `/v1/templates/${id}`, { token: other.token });
  t.is(foreign.status, 404);
  t.is(foreign.body.code, 'NOT_FOUND');

  const viewer = await addMember(api, owner.organizationId, 'viewer');
  const readOnly = (await createApiKey(api, owner.token, 'read_only')).key;
  const deploymentsOnly = (await createApiKey(api, owner.token, 'deployments_only')).key;
  for (const as of [viewer.as, { token: readOnly }, { token: deploymentsOnly }]) {
    const res = await api.request('DELETE', `/v1/templates/${id}`, as);
    t.is(res.status, 403);
    t.is(res.body.code, 'INSUFFICIENT_PERMISSIONS');
  }
  t.is((await api.request('GET', `/v1/templates/${id}/versions`, { token: owner.token })).status, 200, 'still there');
});

test('no credential is 401 on every template row', async (t) => {
  const owner = await signup(api, 'anon');
  const { id } = await createTemplate(owner, { visibility: 'public' });
  const rows = api.app.routes.filter((route) => /template/.test(route.path));
  t.true(rows.length >= 15, rows.map((r) => r.path).join(', '));
  for (const route of rows) {
    const path = route.path.replace('{id}', id) + (route.path.startsWith('/v1/') ? `?orgId=${owner.organizationId}` : '');
    const res = await api.request(route.method, path, { body: route.body ? {} : undefined });
    t.is(res.status, 401, `${route.method} ${route.path}`);
  }
});

test('scopes: a read-only key reads templates and changes none; a deployments-only key reads and deploys them, creating and starring none', async (t) => {
  const owner = await signup(api, 'scopes');
  const { id } = await createTemplate(owner);
  const readOnly = (await createApiKey(api, owner.token, 'read_only')).key;
  const deploymentsOnly = (await createApiKey(api, owner.token, 'deployments_only')).key;
  const reads: Array<[string, string]> = [
    ['GET', `/v1/templates/deploy?orgId=${owner.organizationId}`],
    ['GET', `/v1/models/templates?orgId=${owner.organizationId}`],
    ['GET', `/v1/templates/${id}/versions`],
    ['GET', `/v1/templates/${id}/star?orgId=${owner.organizationId}`],
    ['GET', `/v1/templates/${id}/deploy?orgId=${owner.organizationId}`],
    ['GET', '/v1/deployments/outdated-templates'],
    ['GET', '/v1/notifications/template-updates'],
  ];
  for (const token of [readOnly, deploymentsOnly]) {
    for (const [method, path] of reads) t.is((await api.request(method, path, { token })).status, 200, `${path} ${token === readOnly ? 'read only' : 'deployments only'}`);
  }
  const writes: Array<[string, string, unknown]> = [
    ['POST', '/v1/templates/deploy', { name: 'nope', configuration: configuration() }],
    ['POST', `/v1/templates/${id}/star`, {}],
    ['DELETE', `/v1/templates/${id}/star`, undefined],
    ['POST', `/v1/templates/${id}/new-version`, { configuration: { maxReplicas: 2 } }],
    ['DELETE', `/v1/templates/${id}`, undefined],
    ['PATCH', '/v1/notifications/template-updates', { seen: 'all' }],
  ];
  for (const token of [readOnly, deploymentsOnly]) {
    for (const [method, path, body] of writes) {
      const res = await api.request(method, path, { token, body });
      t.is(res.status, 403, `${method} ${path}`);
      t.is(res.body.code, 'INSUFFICIENT_PERMISSIONS');
    }
  }
  t.is((await api.request('POST', `/v1/templates/${id}/deploy`, { token: readOnly, body: { name: 'ro' } })).status, 403);
  const deployed = await api.request('POST', `/v1/templates/${id}/deploy`, { token: deploymentsOnly, body: { name: 'scoped' } });
  t.is(deployed.status, 201);
  t.is((await api.request('POST', `/v1/deployments/${deployed.body.id}/share-as-template`, { token: deploymentsOnly, body: { name: 'no' } })).status, 403);
  t.is((await api.request('GET', `/v1/templates/${id}/versions`, { token: owner.token })).body.data.length, 1, 'nothing changed');
});
