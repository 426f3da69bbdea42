// Deployments on both surfaces: create, read, update, delete, validation, credits, scopes, tenancy.
import { createHash } from 'node:crypto';
import test from 'ava';
import { createApiKey, desiredStatesSent, signup, startTestApi, type TestApi, validDeployment } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

test('POST /v1/deployments answers 201 with id, name, status pending and endpoint', async (t) => {
  const { token } = await signup(api);
  const res = await api.request('POST', '/v1/deployments', { token, body: validDeployment() });
  t.is(res.status, 201);
  t.deepEqual(Object.keys(res.body).sort(), ['endpoint', 'id', 'name', 'notices', 'status']);
  t.regex(res.body.id, /^dep_[0-9a-z]{20}$/);
  t.like(res.body, { name: 'llama-chat', status: 'pending' });
  t.true(URL.canParse(res.body.endpoint));
});

test('POST /api/deployments answers in the envelope; GET reads every field', async (t) => {
  const { token } = await signup(api);
  const res = await api.request('POST', '/api/v1/deployments', { token, body: { ...validDeployment(), replicas: 2, maxReplicas: 4 } });
  t.is(res.status, 201);
  t.like(res.body, { success: true, error: null, data: { name: 'llama-chat', status: 'pending' } });
  const read = await api.request('GET', `/api/deployments/${res.body.data.id}`, { token });
  t.is(read.status, 200);
  t.like(read.body.data, {
    id: res.body.data.id, name: 'llama-chat', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4',
    gpuType: 'nvidia-l4', status: 'pending', state: 'PENDING', endpoint: res.body.data.endpoint,
    replicas: 2, currentReplicas: 0, minReplicas: 2, maxReplicas: 4,
  });
  t.false(Number.isNaN(Date.parse(read.body.data.createdAt)));
});

test('GET /v1/deployments lists the organization\'s deployments', async (t) => {
  const { token, organizationId } = await signup(api);
  await api.request('POST', '/v1/deployments', { token, body: validDeployment('one') });
  const res = await api.request('GET', `/v1/deployments?orgId=${organizationId}`, { token });
  t.is(res.status, 200);
  t.is(res.body.data.length, 1);
  t.like(res.body, { data: [{ name: 'one' }], pagination: { hasMore: false, nextCursor: null } });
});

test('every model source Kiln can load is accepted', async (t) => {
  const { token } = await signup(api);
  const models = ['mistralai/Mistral-7B-Instruct-v0.3', 'hf://Qwen/Qwen2.5-7B', 's3://my-bucket/models/llama', 'gs://bucket-1/path/to/model'];
  for (const [i, model] of models.entries()) {
    const res = await api.request('POST', '/api/deployments', { token, body: { ...validDeployment(`m${i}`), model } });
    t.is(res.status, 201, model);
  }
});

test('a model Kiln cannot load is 400 INVALID_MODEL with model and valid sources', async (t) => {
  const { token } = await signup(api);
  for (const model of ['not a model', 'ftp://host/model', 'https://example.com/model.bin', 'llama']) {
    const res = await api.request('POST', '/api/deployments', { token, body: { ...validDeployment(), model } });
    t.is(res.status, 400, model);
    t.is(res.body.error.code, 'INVALID_MODEL');
    t.is(res.body.error.details.model, model);
    t.true(Array.isArray(res.body.error.details.valid_sources));
  }
  const reference = await api.request('POST', '/v1/deployments', { token, body: { ...validDeployment(), model: 'bad model' } });
  t.like(reference.body, { code: 'INVALID_MODEL', statusCode: 400, error: 'Bad Request' });
});

test('rule violations are 422 naming the field: name, runtime, gpu, replicas', async (t) => {
  const { token } = await signup(api);
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ name: 'Not_A_Label' }, 'name'],
    [{ name: '-leading' }, 'name'],
    // A Service name must start with a letter (RFC 1035): refused here, not by the stack later.
    [{ name: '7b-chat' }, 'name'],
    [{ model: `hf://org/${'m'.repeat(250)}` }, 'model'],
    [{ name: 'a'.repeat(64) }, 'name'],
    [{ runtime: 'tgi' }, 'runtime'],
    [{ gpu: 'nvidia-b200' }, 'gpu'],
    [{ replicas: -1 }, 'replicas'],
    [{ minReplicas: -1 }, 'minReplicas'],
    [{ maxReplicas: 0 }, 'maxReplicas'],
    [{ autoscaling: { targetRequestsPerReplica: 0 } }, 'autoscaling.targetRequestsPerReplica'],
    [{ autoscaling: { scaleToZeroAfterSeconds: 5 } }, 'autoscaling.scaleToZeroAfterSeconds'],
    [{ replicas: 3, maxReplicas: 2 }, 'replicas'],
  ];
  for (const [change, field] of cases) {
    const res = await api.request('POST', '/api/deployments', { token, body: { ...validDeployment(), ...change } });
    t.is(res.status, 422, JSON.stringify(change));
    t.is(res.body.error.code, 'VALIDATION_ERROR');
    t.is(res.body.error.details.fields[0].field, field);
  }
});

test('wrong types and missing fields are 400 naming the field', async (t) => {
  const { token } = await signup(api);
  const missing = await api.request('POST', '/api/deployments', { token, body: { name: 'x', runtime: 'vllm', gpu: 'nvidia-l4' } });
  t.is(missing.status, 400);
  t.is(missing.body.error.details.fields[0].field, 'model');
  const wrongType = await api.request('POST', '/v1/deployments', { token, body: { ...validDeployment(), replicas: 'two' } });
  t.is(wrongType.status, 400);
  t.regex(wrongType.body.message, /replicas/);
});

test('a name already used in the organization is 409; another organization may use it', async (t) => {
  const a = await signup(api, 'a');
  const b = await signup(api, 'b');
  t.is((await api.request('POST', '/api/deployments', { token: a.token, body: validDeployment('shared') })).status, 201);
  const dup = await api.request('POST', '/api/deployments', { token: a.token, body: validDeployment('shared') });
  t.is(dup.status, 409);
  t.is(dup.body.error.code, 'RESOURCE_EXISTS');
  t.is((await api.request('POST', '/api/deployments', { token: b.token, body: validDeployment('shared') })).status, 201);
});

test('an organization out of credits gets 402 INSUFFICIENT_CREDITS', async (t) => {
  const { token, organizationId } = await signup(api);
  await api.pool.query('UPDATE organization SET credits_cents = 0 WHERE id = $1', [organizationId]);
  const res = await api.request('POST', '/v1/deployments', { token, body: validDeployment() });
  t.is(res.status, 402);
  t.deepEqual(res.body, { error: 'Payment Required', message: 'Not enough credits for this deployment', code: 'INSUFFICIENT_CREDITS', statusCode: 402 });
});

test('growing or starting a deployment needs credits too; changes that cost no more do not', async (t) => {
  const { token, organizationId } = await signup(api);
  const created = await api.request('POST', '/api/deployments', { token, body: validDeployment('grows') });
  t.is(created.status, 201);
  const id = created.body.data.id;
  const row = async () => (await api.pool.query('SELECT replicas, max_replicas, gpu, running, generation FROM deployment WHERE id = $1', [id])).rows[0];
  await api.pool.query('UPDATE organization SET credits_cents = 1 WHERE id = $1', [organizationId]);
  const before = await row();

  const patched = await api.request('PATCH', `/api/deployments/${id}`, { token, body: { replicas: 2, maxReplicas: 2 } });
  t.is(patched.status, 402);
  t.is(patched.body.error.code, 'INSUFFICIENT_CREDITS');
  t.is((await api.request('PATCH', `/api/deployments/${id}`, { token, body: { gpu: 'nvidia-h100-80gb' } })).status, 402);
  t.is((await api.request('POST', `/v1/deployments/${id}/actions`, { token, body: { action: 'scale', replicas: 2 } })).status, 402);
  t.deepEqual(await row(), before, 'nothing changed');

  t.is((await api.request('PATCH', `/api/deployments/${id}`, { token, body: { model: 'hf://Qwen/Qwen2.5-7B' } })).status, 200);
  t.is((await api.request('POST', `/v1/deployments/${id}/actions`, { token, body: { action: 'stop' } })).status, 200);
  const start = await api.request('POST', `/v1/deployments/${id}/actions`, { token, body: { action: 'start' } });
  t.is(start.status, 402);
  t.false((await row()).running, 'still stopped');
});

test('PATCH changes part of the configuration, PUT replaces it', async (t) => {
  const { token } = await signup(api);
  const { body } = await api.request('POST', '/api/deployments', { token, body: { ...validDeployment(), replicas: 2, maxReplicas: 5 } });
  const id = body.data.id;
  const patched = await api.request('PATCH', `/api/deployments/${id}`, { token, body: { replicas: 4 } });
  t.is(patched.status, 200);
  t.like(patched.body.data, { replicas: 4, minReplicas: 2, maxReplicas: 5, gpu: 'nvidia-l4' });
  const replaced = await api.request('PUT', `/api/deployments/${id}`, { token, body: { model: 'hf://Qwen/Qwen2.5-7B', runtime: 'vllm', gpu: 'nvidia-a10g' } });
  t.is(replaced.status, 200);
  t.like(replaced.body.data, { model: 'hf://Qwen/Qwen2.5-7B', gpu: 'nvidia-a10g', replicas: 1, minReplicas: 1, maxReplicas: 1, name: 'llama-chat' });
  const read = await api.request('GET', `/api/deployments/${id}`, { token });
  t.like(read.body.data, { gpu: 'nvidia-a10g' });
});

test('bad updates: replicas beyond max 422, unknown field 400, bad model 400', async (t) => {
  const { token } = await signup(api);
  const { body } = await api.request('POST', '/api/deployments', { token, body: validDeployment() });
  const id = body.data.id;
  t.is((await api.request('PATCH', `/api/deployments/${id}`, { token, body: { replicas: 9 } })).status, 422);
  t.is((await api.request('PATCH', `/api/deployments/${id}`, { token, body: { name: 'renamed' } })).status, 400);
  t.is((await api.request('PATCH', `/api/deployments/${id}`, { token, body: { model: 'nope' } })).body.error.code, 'INVALID_MODEL');
  t.is((await api.request('PUT', `/api/deployments/${id}`, { token, body: { model: 'a/b' } })).status, 400);
});

test('DELETE answers at once with deleting and tells the workflow; updates are then refused', async (t) => {
  const { token } = await signup(api);
  const { body } = await api.request('POST', '/api/deployments', { token, body: validDeployment('gone') });
  const res = await api.request('DELETE', `/api/deployments/${body.data.id}`, { token });
  t.is(res.status, 200);
  t.deepEqual(res.body, { success: true, data: { id: body.data.id, status: 'deleting' }, error: null });
  t.is((await api.request('GET', `/api/deployments/${body.data.id}`, { token })).body.data.status, 'deleting');
  const again = await api.request('DELETE', `/api/deployments/${body.data.id}`, { token });
  t.deepEqual(again.body.data, { id: body.data.id, status: 'deleting' }, 'a repeated DELETE is harmless');
  const patch = await api.request('PATCH', `/api/deployments/${body.data.id}`, { token, body: { replicas: 2 } });
  t.is(patch.status, 409);
  t.deepEqual((await desiredStatesSent(api, body.data.id)).map(({ generation, deleted }) => ({ generation, deleted })), [{ generation: 1, deleted: false }, { generation: 2, deleted: true }], 'the repeated DELETE sent nothing again');
});

test('create starts the deployment\'s workflow (id = deployment id) and an update signals its new desired state', async (t) => {
  const { token } = await signup(api);
  const { body } = await api.request('POST', '/api/deployments', { token, body: validDeployment('wf') });
  const handle = api.workflows.workflow.getHandle(body.data.id);
  const description = await handle.describe();
  t.is(description.type, 'deploymentWorkflow');
  t.is(description.taskQueue, 'kiln-deployments');
  t.is(description.status.name, 'RUNNING');
  t.deepEqual(await description.memo, { name: 'wf', model: validDeployment('wf').model });

  const patched = await api.request('PATCH', `/api/deployments/${body.data.id}`, { token, body: { replicas: 2, maxReplicas: 4 } });
  t.is(patched.status, 200);
  const sent = await desiredStatesSent(api, body.data.id);
  t.like(sent.at(-1), { generation: 2, deleted: false });
});


test('another organization\'s deployment is 404 for read, update and delete', async (t) => {
  const a = await signup(api, 'a');
  const b = await signup(api, 'b');
  const { body } = await api.request('POST', '/api/deployments', { token: b.token, body: validDeployment() });
  const path = `/api/deployments/${body.data.id}`;
  for (const [method, payload] of [['GET', undefined], ['PATCH', { replicas: 1 }], ['PUT', { model: 'a/b', runtime: 'vllm', gpu: 'nvidia-t4' }], ['DELETE', undefined]] as const) {
    const res = await api.request(method, path, { token: a.token, body: payload });
    t.is(res.status, 404, method);
    t.is(res.body.error.code, 'DEPLOYMENT_NOT_FOUND');
  }
  t.is((await api.request('GET', path, { token: b.token })).status, 200);
  t.deepEqual((await api.request('GET', '/api/deployments', { token: a.token })).body.data, []);
});

test('every deployment route needs a credential', async (t) => {
  const routes = [['GET', '/v1/deployments'], ['POST', '/v1/deployments'], ['GET', '/api/deployments'], ['POST', '/api/deployments'],
    ['GET', '/api/deployments/dep_x'], ['PATCH', '/api/deployments/dep_x'], ['PUT', '/api/deployments/dep_x'], ['DELETE', '/api/deployments/dep_x'], ['GET', '/v1/gpu-types']];
  for (const [method, path] of routes) {
    const res = await api.request(method!, path!, { body: method === 'GET' || method === 'DELETE' ? undefined : validDeployment() });
    t.is(res.status, 401, `${method} ${path}`);
  }
});

test('scopes: read only reads, deployments only deploys', async (t) => {
  const { token, organizationId } = await signup(api);
  const readOnly = await createApiKey(api, token, 'read_only');
  const deploymentsOnly = await createApiKey(api, token, 'deployments_only');
  const created = await api.request('POST', '/api/deployments', { token: deploymentsOnly.key, body: validDeployment() });
  t.is(created.status, 201);
  const id = created.body.data.id;
  t.is((await api.request('GET', `/api/deployments/${id}`, { token: readOnly.key })).status, 200);
  t.is((await api.request('GET', `/v1/gpu-types?orgId=${organizationId}`, { token: readOnly.key })).status, 200);
  for (const [method, path, body] of [
    ['POST', '/api/deployments', validDeployment('other')], ['POST', '/v1/deployments', validDeployment('other')],
    ['PATCH', `/api/deployments/${id}`, { replicas: 1 }], ['DELETE', `/api/deployments/${id}`, undefined],
  ] as const) {
    const res = await api.request(method, path, { token: readOnly.key, body });
    t.is(res.status, 403, `${method} ${path}`);
  }
  t.is((await api.request('DELETE', `/api/deployments/${id}`, { token: deploymentsOnly.key })).status, 200);
});

test('Idempotency-Key: same request replays the first answer, another request under it is 409', async (t) => {
  const { token } = await signup(api);
  const headers = { 'idempotency-key': 'deploy-42' };
  const first = await api.request('POST', '/api/deployments', { token, headers, body: validDeployment('idem') });
  t.is(first.status, 201);
  const replay = await api.request('POST', '/api/deployments', { token, headers, body: validDeployment('idem') });
  t.is(replay.status, 201);
  t.deepEqual(replay.body, first.body);
  t.is((await api.request('GET', '/api/deployments', { token })).body.data.length, 1);
  const conflict = await api.request('POST', '/api/deployments', { token, headers, body: validDeployment('other') });
  t.is(conflict.status, 409);
  t.is(conflict.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
  // Keys belong to their caller: another organization may use the same key.
  const other = await signup(api, 'other');
  t.is((await api.request('POST', '/v1/deployments', { token: other.token, headers, body: validDeployment('idem') })).status, 201);
});

test('concurrent twins under one Idempotency-Key: one creation, every twin gets its answer', async (t) => {
  const { token, organizationId } = await signup(api);
  const headers = { 'idempotency-key': 'double-click' };
  const answers = await Promise.all(Array.from({ length: 6 }, () => api.request('POST', '/api/deployments', { token, headers, body: validDeployment('twin') })));
  t.deepEqual(answers.map((a) => a.status), Array(6).fill(201));
  t.is(new Set(answers.map((a) => a.body.data.id)).size, 1, 'one deployment id in every answer');
  t.is(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true').length, 5);
  t.is(Number((await api.pool.query('SELECT count(*) FROM deployment WHERE organization_id = $1', [organizationId])).rows[0].count), 1);
  const keys = await Promise.all(Array.from({ length: 4 }, () => api.request('POST', '/v1/settings/api-keys', { token, headers: { 'idempotency-key': 'one-key' }, body: { name: 'ci', scope: 'read_only' } })));
  t.is(new Set(keys.map((k) => k.body.key)).size, 1, 'one key value shown to every twin');
  t.is(Number((await api.pool.query('SELECT count(*) FROM api_key WHERE organization_id = $1', [organizationId])).rows[0].count), 1);
});

test('a request whose twin is still running longer than the wait is told to retry; a reservation no longer renewed (its process died) frees the key to a waiting twin', async (t) => {
  const { token, userId, organizationId } = await signup(api);
  const headers = { 'idempotency-key': 'stuck' };
  // The reservation a request in flight holds (status 0), under this caller, renewed as its process does while alive.
  const caller = `${organizationId}:${userId}`;
  const body = validDeployment('slow');
  const hash = createHash('sha256').update(`POST /api/deployments ${JSON.stringify(body)}`).digest('hex');
  await api.pool.query(`INSERT INTO idempotency_record (id, created_at, caller_key, key, request_hash, status_code, response_body) VALUES ('idem_inflight', now(), $1, 'stuck', $2, 0, '{}')`, [caller, hash]);
  const renewal = setInterval(() => void api.pool.query(`UPDATE idempotency_record SET created_at = now() WHERE id = 'idem_inflight'`), 1000);
  const waited = await api.request('POST', '/api/deployments', { token, headers, body }).finally(() => clearInterval(renewal));
  t.is(waited.status, 409);
  t.regex(waited.body.error.message, /still in progress/);
  t.is((await api.request('POST', '/api/deployments', { token, headers, body: validDeployment('other') })).body.error.message, 'Idempotency-Key was already used with a different request');
  // Its process killed: renewed last 7 s ago, the reservation is let go within the twin's wait, which runs the request.
  await api.pool.query(`UPDATE idempotency_record SET created_at = now() - interval '7 seconds' WHERE id = 'idem_inflight'`);
  const started = performance.now();
  t.is((await api.request('POST', '/api/deployments', { token, headers, body })).status, 201);
  t.log(`taken over after ${((performance.now() - started) / 1000).toFixed(1)} s`);
});

test('a create whose process died after it committed, before answering: the retry answers with that deployment, creating no other', async (t) => {
  const { token, organizationId } = await signup(api);
  const headers = { 'idempotency-key': 'crashed-after-commit' };
  const first = await api.request('POST', '/v1/deployments', { token, headers, body: validDeployment('survivor') });
  t.is(first.status, 201);
  // The creating transaction named its deployment under the key.
  const record = (await api.pool.query(`SELECT resource_id FROM idempotency_record WHERE key = 'crashed-after-commit'`)).rows[0];
  t.is(record.resource_id, first.body.id);
  // What a process killed between that commit and storing its answer leaves: the reservation, renewed 9 s ago, no answer.
  await api.pool.query(`UPDATE idempotency_record SET status_code = 0, response_body = '{}', created_at = now() - interval '9 seconds' WHERE key = 'crashed-after-commit'`);
  const retried = await api.request('POST', '/v1/deployments', { token, headers, body: validDeployment('survivor') });
  t.is(retried.status, 201);
  t.is(retried.headers.get('idempotent-replayed'), 'true');
  t.deepEqual(Object.keys(retried.body).sort(), Object.keys(first.body).sort());
  t.like(retried.body, { id: first.body.id, name: 'survivor', endpoint: first.body.endpoint });
  t.is(Number((await api.pool.query('SELECT count(*) FROM deployment WHERE organization_id = $1', [organizationId])).rows[0].count), 1);
  // Its answer is stored now: the next retry replays it as any other.
  const again = await api.request('POST', '/v1/deployments', { token, headers, body: validDeployment('survivor') });
  t.deepEqual(again.body, retried.body);
  // A reservation whose create never committed (no deployment named) still frees the key, as before.
  const untouched = { 'idempotency-key': 'crashed-before-commit' };
  await api.pool.query(`INSERT INTO idempotency_record (id, created_at, caller_key, key, request_hash, status_code, response_body) SELECT 'idem_precommit', now() - interval '9 seconds', caller_key, 'crashed-before-commit', $1, 0, '{}' FROM idempotency_record WHERE key = 'crashed-after-commit'`,
    [createHash('sha256').update(`POST /v1/deployments ${JSON.stringify(validDeployment('second'))}`).digest('hex')]);
  const fresh = await api.request('POST', '/v1/deployments', { token, headers: untouched, body: validDeployment('second') });
  t.is(fresh.status, 201);
  t.is(fresh.headers.get('idempotent-replayed'), null);
});

test('an Idempotency-Key is remembered for a day, then free again', async (t) => {
  const { token } = await signup(api);
  const headers = { 'idempotency-key': 'daily-deploy' };
  t.is((await api.request('POST', '/api/deployments', { token, headers, body: validDeployment('monday') })).status, 201);
  t.is((await api.request('POST', '/api/deployments', { token, headers, body: validDeployment('tuesday') })).status, 409);
  await api.pool.query(`UPDATE idempotency_record SET created_at = now() - interval '25 hours' WHERE key = 'daily-deploy'`);
  const later = await api.request('POST', '/api/deployments', { token, headers, body: validDeployment('tuesday') });
  t.is(later.status, 201);
  t.is(later.body.data.name, 'tuesday');
});

test('a failed create is not stored under its Idempotency-Key', async (t) => {
  const { token, organizationId } = await signup(api);
  const headers = { 'idempotency-key': 'retry-me' };
  await api.pool.query('UPDATE organization SET credits_cents = 0 WHERE id = $1', [organizationId]);
  t.is((await api.request('POST', '/api/deployments', { token, headers, body: validDeployment() })).status, 402);
  await api.pool.query('UPDATE organization SET credits_cents = 10000 WHERE id = $1', [organizationId]);
  t.is((await api.request('POST', '/api/deployments', { token, headers, body: validDeployment() })).status, 201);
});

test('GET /v1/gpu-types lists the catalog with memory, price and availability', async (t) => {
  const { token, organizationId } = await signup(api);
  const res = await api.request('GET', `/v1/gpu-types?orgId=${organizationId}`, { token });
  t.is(res.status, 200);
  const ids = res.body.map((g: { id: string }) => g.id);
  for (const id of ['nvidia-h100-80gb', 'nvidia-a100-80gb', 'nvidia-a10g', 'nvidia-l4', 'nvidia-t4']) t.true(ids.includes(id), id);
  t.like(res.body.find((g: { id: string }) => g.id === 'nvidia-h100-80gb'), { memoryGb: 80, hourlyPriceUsd: 4.5, available: true });
});

test('minReplicas 0 and an autoscaling policy: the defaults fill what is left out, a PATCH keeps the rest, and the workflow is sent them', async (t) => {
  const { token } = await signup(api);
  const created = await api.request('POST', '/v1/deployments', { token, body: { ...validDeployment('elastic'), replicas: 0, minReplicas: 0, maxReplicas: 4, autoscaling: { targetRequestsPerReplica: 4 } } });
  t.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const read = await api.request('GET', `/api/deployments/${id}`, { token });
  t.like(read.body.data, { replicas: 0, minReplicas: 0, maxReplicas: 4, currentReplicas: 0, autoscaling: { targetRequestsPerReplica: 4, scaleDownDelaySeconds: 300, scaleToZeroAfterSeconds: 900 } });
  const patched = await api.request('PATCH', `/api/deployments/${id}`, { token, body: { autoscaling: { scaleToZeroAfterSeconds: 120 } } });
  t.is(patched.status, 200, JSON.stringify(patched.body));
  t.deepEqual(patched.body.data.autoscaling, { targetRequestsPerReplica: 4, scaleDownDelaySeconds: 300, scaleToZeroAfterSeconds: 120 });
  const [, second] = await desiredStatesSent(api, id);
  t.like(second, { generation: 2, minReplicas: 0, autoscaling: { scaleToZeroAfterSeconds: 120 }, replicaRequests: 0 });

  // Setting the replica count again, even to the same number, is a request the workflow sees (it replaces the autoscaler's).
  await api.request('POST', `/v1/deployments/${id}/actions`, { token, body: { action: 'scale', replicas: 0 } });
  t.like((await desiredStatesSent(api, id))[2], { generation: 3, replicas: 0, replicaRequests: 1 });

  const unknown = await api.request('PATCH', `/api/deployments/${id}`, { token, body: { autoscaling: { targetLoad: 3 } } });
  t.is(unknown.status, 400);
  t.is((await api.request('PATCH', `/api/deployments/${id}`, { token, body: { autoscaling: { targetRequestsPerReplica: 'many' } } })).status, 400);
  t.is((await api.request('GET', `/api/deployments/${id}`, { token })).body.data.autoscaling.scaleToZeroAfterSeconds, 120, 'a refused change changes nothing');
});
