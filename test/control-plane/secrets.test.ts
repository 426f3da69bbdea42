// /v1/secrets: an organization's credentials, sealed, shown once never (only the last four characters), tested
// against local stand-ins of the services they are for (test/support/hub-recordings.ts, object-store-standin.ts,
// registry-standin.ts), mounted by deployments, and never written anywhere in the clear: the app's log lines,
// every answer and the audit records of this run are searched for the values at the end.
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import test from 'ava';
import { pino } from 'pino';
import { loadConfig } from '../../control-plane/config.ts';
import { organizationSecretsKeyRing } from '../../lib/keys.ts';
import { addMember, createApiKey, desiredStatesSent, signup, startTestApi, validDeployment, type TestApi, type TestResponse } from '../support/control-plane.ts';
import { RECORDED_HUB_TOKEN, startHubRecordings, type HubRecordings } from '../support/hub-recordings.ts';
import {
  STANDIN_ACCESS_KEY_ID, STANDIN_BUCKET, STANDIN_SECRET_ACCESS_KEY, startObjectStoreStandin,
} from '../support/object-store-standin.ts';
import { STANDIN_REGISTRY_PASSWORD, STANDIN_REGISTRY_USER, startRegistryStandin } from '../support/registry-standin.ts';

const TEST_SIGNING_KEY = 'test-signing-key-0123456789abcdefghijklmnop';

let api: TestApi;
let hub: HubRecordings;
let store: Awaited<ReturnType<typeof startObjectStoreStandin>>;
let registry: Awaited<ReturnType<typeof startRegistryStandin>>;
/** Every line the app logged, every answer it gave. */
const logLines: string[] = [];
const answers: string[] = [];
/** Values given to the API that must never come back out. */
const secretValues = new Set<string>([STANDIN_SECRET_ACCESS_KEY, STANDIN_REGISTRY_PASSWORD, RECORDED_HUB_TOKEN]);

function capturingLogger() {
  return pino({ level: 'trace' }, new Writable({ write(chunk, _encoding, done) { logLines.push(String(chunk)); done(); } }));
}

test.before(async () => {
  [hub, store, registry] = await Promise.all([startHubRecordings(), startObjectStoreStandin(), startRegistryStandin()]);
  api = await startTestApi(import.meta.filename, { config: hub.hubConfig(undefined, 10_000), log: capturingLogger() });
});
test.after.always(async () => {
  await api?.close();
  await Promise.all([hub?.close(), store?.close(), registry?.close()]);
});

/** A request whose answer is kept for the final search. */
async function call(method: string, path: string, options: Parameters<TestApi['request']>[2] = {}): Promise<TestResponse> {
  const res = await api.request(method, path, options);
  answers.push(`${res.status} ${JSON.stringify(res.body)} ${JSON.stringify([...res.headers])}`);
  return res;
}

/** A Hugging Face token no other test uses: the stand-in's token only where the Hub must accept it. */
function freshToken(): string {
  const token = `hf_${randomBytes(12).toString('hex')}Zq9X`;
  secretValues.add(token);
  return token;
}

async function createHfSecret(token: string, name: string, value = freshToken()) {
  const res = await call('POST', '/v1/secrets', { token, body: { name, type: 'huggingface_token', value } });
  if (res.status !== 201) throw new Error(`secret creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...res.body as { id: string; name: string }, value };
}

test('a created secret answers its name, type and last four characters, never its value; the list shows the same', async (t) => {
  const owner = await signup(api, 'secrets-owner');
  const value = freshToken();
  const created = await call('POST', '/v1/secrets', { token: owner.token, body: { name: 'hf-token', type: 'huggingface_token', value } });
  t.is(created.status, 201);
  t.like(created.body, { name: 'hf-token', type: 'huggingface_token', lastFour: 'Zq9X', details: {}, lastUsedAt: null, usedBy: [] });
  t.regex(created.body.id, /^sec_/);
  t.false(JSON.stringify(created.body).includes(value));

  const list = await call('GET', `/v1/secrets?orgId=${owner.organizationId}`, { token: owner.token });
  t.is(list.status, 200);
  t.deepEqual(list.body.data.map((s: { id: string }) => s.id), [created.body.id]);
  t.like(list.body.data[0], { name: 'hf-token', lastFour: 'Zq9X' });
  t.false(JSON.stringify(list.body).includes(value));
  t.deepEqual(list.body.pagination, { hasMore: false, nextCursor: null });
  // What is stored is sealed under a key id, not the value.
  const { rows } = await api.pool.query<{ sealed_value: string }>('SELECT sealed_value FROM organization_secret WHERE id = $1', [created.body.id]);
  t.regex(rows[0]!.sealed_value, /^v2\.[\w-]+\.[\w-]+\.[\w-]+$/);
  t.false(rows[0]!.sealed_value.includes(value));
});

test('object-store and registry secrets keep their endpoint and user in the clear, the secret part sealed', async (t) => {
  const owner = await signup(api, 'secrets-kinds');
  const s3 = await call('POST', '/v1/secrets', { token: owner.token, body: {
    name: 'models-bucket', type: 'object_store', endpoint: store.url, bucket: STANDIN_BUCKET, accessKeyId: STANDIN_ACCESS_KEY_ID, secretAccessKey: STANDIN_SECRET_ACCESS_KEY,
  } });
  t.is(s3.status, 201);
  t.like(s3.body, { type: 'object_store', lastFour: 'wxyz', details: { endpoint: store.url, region: 'us-east-1', bucket: STANDIN_BUCKET } });
  t.false(JSON.stringify(s3.body).includes(STANDIN_ACCESS_KEY_ID));
  const docker = await call('POST', '/v1/secrets', { token: owner.token, body: {
    name: 'registry', type: 'registry_password', registry: registry.url, username: STANDIN_REGISTRY_USER, password: STANDIN_REGISTRY_PASSWORD,
  } });
  t.is(docker.status, 201);
  t.like(docker.body, { type: 'registry_password', lastFour: '7x9q', details: { registry: registry.url, username: STANDIN_REGISTRY_USER } });
});

test('the list comes in cursor pages, newest first', async (t) => {
  const owner = await signup(api, 'secrets-pages');
  const made = [];
  for (const name of ['one', 'two', 'three']) made.push((await createHfSecret(owner.token, name)).id);
  const first = await call('GET', `/v1/secrets?orgId=${owner.organizationId}&limit=2`, { token: owner.token });
  t.deepEqual(first.body.data.map((s: { id: string }) => s.id), [made[2], made[1]]);
  t.true(first.body.pagination.hasMore);
  const second = await call('GET', `/v1/secrets?orgId=${owner.organizationId}&limit=2&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`, { token: owner.token });
  t.deepEqual(second.body.data.map((s: { id: string }) => s.id), [made[0]]);
  t.false(second.body.pagination.hasMore);
});

test('bad input: a missing field or wrong type is 400, a broken rule 422, a taken name 409', async (t) => {
  const owner = await signup(api, 'secrets-input');
  const post = (body: unknown) => call('POST', '/v1/secrets', { token: owner.token, body });
  t.is((await post({ name: 'x', type: 'huggingface_token' })).status, 400);
  t.is((await post({ name: 'x', type: 'huggingface_token', value: 42 })).status, 400);
  t.is((await post({ name: 'x', type: 'huggingface_token', value: freshToken(), extra: true })).status, 400);
  const badName = await post({ name: 'no spaces please', type: 'huggingface_token', value: freshToken() });
  t.is(badName.status, 422);
  t.is(badName.body.code, 'VALIDATION_ERROR');
  t.is((await post({ name: 'short', type: 'huggingface_token', value: 'abc' })).status, 422);
  t.is((await post({ name: 'bucket', type: 'object_store', endpoint: 'ftp://store', bucket: 'b-1', accessKeyId: 'AKIA0000', secretAccessKey: 'secret-secret' })).status, 422);
  t.true([400, 422].includes((await post({ name: 'x', type: 'gcp_key', value: 'abcd' })).status));
  await createHfSecret(owner.token, 'taken');
  const again = await post({ name: 'taken', type: 'huggingface_token', value: freshToken() });
  t.is(again.status, 409);
  t.is(again.body.code, 'RESOURCE_EXISTS');
  t.is((await call('GET', '/v1/secrets', { token: owner.token })).status, 400, 'orgId is required');
  t.is((await call('POST', '/v1/secrets/test', { token: owner.token, body: {} })).status, 400);
});

test('without a credential every route is 401', async (t) => {
  t.is((await call('GET', '/v1/secrets?orgId=org_x')).status, 401);
  t.is((await call('POST', '/v1/secrets', { body: { name: 'x', type: 'huggingface_token', value: freshToken() } })).status, 401);
  t.is((await call('POST', '/v1/secrets/test', { body: { type: 'huggingface_token', value: freshToken() } })).status, 401);
  t.is((await call('DELETE', '/v1/secrets/sec_x')).status, 401);
});

test('a read-only key lists but cannot write; a deployments-only key and a member see nothing; a viewer neither', async (t) => {
  const owner = await signup(api, 'secrets-scope');
  const secret = await createHfSecret(owner.token, 'scoped');
  const readOnly = await createApiKey(api, owner.token, 'read_only');
  const deploymentsOnly = await createApiKey(api, owner.token, 'deployments_only');
  t.is((await call('GET', `/v1/secrets?orgId=${owner.organizationId}`, { token: readOnly.key })).status, 200);
  t.is((await call('POST', '/v1/secrets', { token: readOnly.key, body: { name: 'ro', type: 'huggingface_token', value: freshToken() } })).status, 403);
  t.is((await call('DELETE', `/v1/secrets/${secret.id}`, { token: readOnly.key })).status, 403);
  t.is((await call('POST', '/v1/secrets/test', { token: readOnly.key, body: { secretId: secret.id } })).status, 403);
  t.is((await call('GET', `/v1/secrets?orgId=${owner.organizationId}`, { token: deploymentsOnly.key })).status, 403);
  for (const role of ['member', 'viewer']) {
    const user = await addMember(api, owner.organizationId, role);
    const denied = await call('GET', `/v1/secrets?orgId=${owner.organizationId}`, user.as);
    t.is(denied.status, 403, role);
    t.is(denied.body.code, 'INSUFFICIENT_PERMISSIONS');
  }
  const admin = await addMember(api, owner.organizationId, 'admin');
  t.is((await call('GET', `/v1/secrets?orgId=${owner.organizationId}`, admin.as)).status, 200);
});

test('another organization\'s secrets: not listed, 404 to delete or test, its orgId 403', async (t) => {
  const [mine, theirs] = [await signup(api, 'secrets-mine'), await signup(api, 'secrets-theirs')];
  const their = await createHfSecret(theirs.token, 'theirs');
  t.is((await call('GET', `/v1/secrets?orgId=${theirs.organizationId}`, { token: mine.token })).status, 403);
  t.deepEqual((await call('GET', `/v1/secrets?orgId=${mine.organizationId}`, { token: mine.token })).body.data, []);
  t.is((await call('DELETE', `/v1/secrets/${their.id}`, { token: mine.token })).status, 404);
  t.is((await call('POST', '/v1/secrets/test', { token: mine.token, body: { secretId: their.id } })).status, 404);
  t.is((await call('GET', `/v1/secrets?orgId=${theirs.organizationId}`, { token: theirs.token })).body.data.length, 1, 'still theirs');
  // Nor may a deployment mount it.
  const refused = await call('POST', '/v1/deployments', { token: mine.token, body: { ...validDeployment('borrower'), secrets: [{ name: 'HF_TOKEN', secretId: their.id }] } });
  t.is(refused.status, 422);
  t.is(refused.body.code, 'VALIDATION_ERROR');
});

test('a deployment mounts a secret: the desired state carries the reference (no value); delete is 409 until the deployment is gone', async (t) => {
  const owner = await signup(api, 'secrets-mount');
  const secret = await createHfSecret(owner.token, 'gated');
  const created = await call('POST', '/v1/deployments', { token: owner.token, body: { ...validDeployment('gated-llama'), secrets: [{ name: 'HF_TOKEN', secretId: secret.id }] } });
  t.is(created.status, 201);
  const depId = created.body.id as string;
  const desired = await desiredStatesSent(api, depId);
  t.deepEqual(desired.at(-1)!.secrets, [{ name: 'HF_TOKEN', secretId: secret.id }]);
  t.false(JSON.stringify(desired).includes(secret.value));

  const list = await call('GET', `/v1/secrets?orgId=${owner.organizationId}`, { token: owner.token });
  t.deepEqual(list.body.data[0].usedBy, [{ id: depId, name: 'gated-llama', env: 'HF_TOKEN' }]);

  const refused = await call('DELETE', `/v1/secrets/${secret.id}`, { token: owner.token });
  t.is(refused.status, 409);
  t.is(refused.body.code, 'RESOURCE_IN_USE');
  t.regex(refused.body.message, /gated-llama/);

  // PATCH with an empty list unmounts it; a deployment deleted (its teardown done) holds nothing either.
  const unmounted = await call('PATCH', `/api/deployments/${depId}`, { token: owner.token, body: { secrets: [] } });
  t.is(unmounted.status, 200);
  t.is((await desiredStatesSent(api, depId)).at(-1)!.secrets, undefined);
  t.is((await call('PATCH', `/api/deployments/${depId}`, { token: owner.token, body: { secrets: [{ name: 'HF_TOKEN', secretId: secret.id }] } })).status, 200);
  await api.pool.query('UPDATE deployment SET delete_requested = true, deleted_at = now() WHERE id = $1', [depId]);
  const deleted = await call('DELETE', `/v1/secrets/${secret.id}`, { token: owner.token });
  t.is(deleted.status, 200);
  t.deepEqual(deleted.body, { id: secret.id, deleted: true });
  t.is((await call('DELETE', `/v1/secrets/${secret.id}`, { token: owner.token })).status, 404);
});

test('a deployment\'s secret references follow the rules: variable names, no repeats, no object-store secret, existing ids', async (t) => {
  const owner = await signup(api, 'secrets-refs');
  const secret = await createHfSecret(owner.token, 'token');
  const s3 = await call('POST', '/v1/secrets', { token: owner.token, body: {
    name: 'bucket', type: 'object_store', endpoint: store.url, bucket: STANDIN_BUCKET, accessKeyId: STANDIN_ACCESS_KEY_ID, secretAccessKey: STANDIN_SECRET_ACCESS_KEY,
  } });
  const create = (secrets: unknown) => call('POST', '/v1/deployments', { token: owner.token, body: { ...validDeployment('refs'), secrets } });
  t.is((await create([{ name: '1BAD', secretId: secret.id }])).status, 422);
  t.is((await create([{ name: 'HF_TOKEN', secretId: secret.id }, { name: 'HF_TOKEN', secretId: secret.id }])).status, 422);
  t.is((await create([{ name: 'AWS', secretId: s3.body.id }])).status, 422);
  t.is((await create([{ name: 'HF_TOKEN', secretId: 'sec_doesnotexist' }])).status, 422);
  t.is((await create([{ name: 'HF_TOKEN' }])).status, 400);
  t.is((await create('HF_TOKEN')).status, 400);
});

test('POST /secrets/test asks the Hub\'s whoami: a good token is ok with its owner, another is refused; nothing is stored', async (t) => {
  const owner = await signup(api, 'secrets-test-hf');
  const good = await call('POST', '/v1/secrets/test', { token: owner.token, body: { type: 'huggingface_token', value: RECORDED_HUB_TOKEN } });
  t.is(good.status, 200);
  t.deepEqual(good.body, { ok: true, service: 'huggingface.whoami', detail: 'the Hub accepts the token: it belongs to user kiln-recordings' });
  const bad = await call('POST', '/v1/secrets/test', { token: owner.token, body: { type: 'huggingface_token', value: freshToken() } });
  t.is(bad.status, 200);
  t.like(bad.body, { ok: false, service: 'huggingface.whoami', detail: 'the Hub refused the token (401)' });
  t.deepEqual((await call('GET', `/v1/secrets?orgId=${owner.organizationId}`, { token: owner.token })).body.data, [], 'nothing stored');
});

test('a stored secret is tested by id, and its last use is recorded', async (t) => {
  const owner = await signup(api, 'secrets-test-stored');
  const secret = await createHfSecret(owner.token, 'hub', RECORDED_HUB_TOKEN);
  const result = await call('POST', '/v1/secrets/test', { token: owner.token, body: { secretId: secret.id } });
  t.is(result.status, 200);
  t.true(result.body.ok);
  const [listed] = (await call('GET', `/v1/secrets?orgId=${owner.organizationId}`, { token: owner.token })).body.data;
  t.not(listed.lastUsedAt, null);
  t.is((await call('POST', '/v1/secrets/test', { token: owner.token, body: { secretId: 'sec_unknown' } })).status, 404);
});

test('object-store credentials are tested with a signed ListObjectsV2: ok, unknown key, wrong secret, unknown bucket', async (t) => {
  const owner = await signup(api, 'secrets-test-s3');
  const test = (over: Record<string, string>) => call('POST', '/v1/secrets/test', { token: owner.token, body: {
    type: 'object_store', endpoint: store.url, bucket: STANDIN_BUCKET, accessKeyId: STANDIN_ACCESS_KEY_ID, secretAccessKey: STANDIN_SECRET_ACCESS_KEY, ...over,
  } });
  const host = new URL(store.url).host;
  t.deepEqual((await test({})).body, { ok: true, service: 's3.ListObjectsV2', detail: `listed bucket ${STANDIN_BUCKET} at ${host} (1 key on the first page)` });
  t.deepEqual((await test({ accessKeyId: 'AKIAUNKNOWN000000000' })).body, { ok: false, service: 's3.ListObjectsV2', detail: `${host} refused the listing of ${STANDIN_BUCKET} (403 InvalidAccessKeyId)` });
  const wrongSecret = 'wrongSecretAccessKey000000000000000000000';
  secretValues.add(wrongSecret);
  t.like((await test({ secretAccessKey: wrongSecret })).body, { ok: false, detail: `${host} refused the listing of ${STANDIN_BUCKET} (403 SignatureDoesNotMatch)` });
  t.like((await test({ bucket: 'other-bucket' })).body, { ok: false, detail: `${host} refused the listing of other-bucket (404 NoSuchBucket)` });
});

test('registry passwords are tested with the v2 API\'s base check', async (t) => {
  const owner = await signup(api, 'secrets-test-registry');
  const test = (password: string) => call('POST', '/v1/secrets/test', { token: owner.token, body: { type: 'registry_password', registry: registry.url, username: STANDIN_REGISTRY_USER, password } });
  const host = new URL(registry.url).host;
  t.deepEqual((await test(STANDIN_REGISTRY_PASSWORD)).body, { ok: true, service: 'registry.v2', detail: `${host} accepts ${STANDIN_REGISTRY_USER}` });
  const wrong = 'not-the-registry-password';
  secretValues.add(wrong);
  t.deepEqual((await test(wrong)).body, { ok: false, service: 'registry.v2', detail: `${host} refused ${STANDIN_REGISTRY_USER} (401)` });
});

test.serial('a service that cannot be reached is a clear result, not an error', async (t) => {
  const owner = await signup(api, 'secrets-unreachable');
  const res = await call('POST', '/v1/secrets/test', { token: owner.token, body: {
    type: 'object_store', endpoint: 'http://127.0.0.1:9', bucket: STANDIN_BUCKET, accessKeyId: STANDIN_ACCESS_KEY_ID, secretAccessKey: STANDIN_SECRET_ACCESS_KEY,
  } });
  t.is(res.status, 200);
  t.deepEqual(res.body, { ok: false, service: 's3.ListObjectsV2', detail: 'could not reach 127.0.0.1:9: ECONNREFUSED' });
  const registryDown = await call('POST', '/v1/secrets/test', { token: owner.token, body: { type: 'registry_password', registry: 'http://127.0.0.1:9', username: 'u', password: STANDIN_REGISTRY_PASSWORD } });
  t.like(registryDown.body, { ok: false, detail: 'could not reach 127.0.0.1:9: ECONNREFUSED' });
  hub.mode = 'error';
  try {
    t.like((await call('POST', '/v1/secrets/test', { token: owner.token, body: { type: 'huggingface_token', value: RECORDED_HUB_TOKEN } })).body, { ok: false, detail: 'the Hub answered 503' });
  } finally {
    hub.mode = 'answer';
  }
});

test('after a key rotation old secrets still open, and the API re-seals them under the new key', async (t) => {
  const before = await startTestApi(`${import.meta.filename}-rotation`, { config: hub.hubConfig(undefined, 10_000) });
  const owner = await signup(before, 'secrets-rotation');
  const made = await before.request('POST', '/v1/secrets', { token: owner.token, body: { name: 'hub', type: 'huggingface_token', value: RECORDED_HUB_TOKEN } });
  t.is(made.status, 201);
  await before.close();

  const newKey = 'rotated-secrets-key-0123456789abcdefghijklmnop';
  const after = await startTestApi(`${import.meta.filename}-rotation`, {
    databaseUrl: before.databaseUrl, config: { ...hub.hubConfig(undefined, 10_000), secretsKeys: { current: newKey, previous: [TEST_SIGNING_KEY] } },
  });
  try {
    t.is(await after.app.services.secrets.resealed, 1);
    const { rows } = await after.pool.query<{ sealed_value: string }>('SELECT sealed_value FROM organization_secret');
    t.deepEqual(rows.map((r) => r.sealed_value.split('.')[1]), [organizationSecretsKeyRing(newKey, []).currentKeyId]);
    const tested = await after.request('POST', '/v1/secrets/test', { token: owner.token, body: { secretId: made.body.id } });
    t.true(tested.body.ok, JSON.stringify(tested.body));
  } finally {
    await after.close();
  }
  // Once re-sealed, the new key alone opens it; the old key alone cannot, which is a clear result.
  const newOnly = await startTestApi(`${import.meta.filename}-rotation`, { databaseUrl: before.databaseUrl, config: { ...hub.hubConfig(undefined, 10_000), secretsKeys: { current: newKey, previous: [] } } });
  try {
    t.is(await newOnly.app.services.secrets.resealed, 0);
    t.true((await newOnly.request('POST', '/v1/secrets/test', { token: owner.token, body: { secretId: made.body.id } })).body.ok);
  } finally {
    await newOnly.close();
  }
  const oldOnly = await startTestApi(`${import.meta.filename}-rotation`, { databaseUrl: before.databaseUrl, config: hub.hubConfig(undefined, 10_000) });
  try {
    const refused = await oldOnly.request('POST', '/v1/secrets/test', { token: owner.token, body: { secretId: made.body.id } });
    t.is(refused.status, 200);
    t.like(refused.body, { ok: false });
    t.regex(refused.body.detail, /cannot be opened/);
  } finally {
    await oldOnly.close();
  }
});

test.after('no secret value reached a log line, an answer or an audit record', async (t) => {
  t.true(logLines.length > 0, 'the app logged');
  const { rows } = await api.pool.query<{ row: string }>('SELECT row_to_json(a)::text AS row FROM audit_log a');
  t.true(rows.length > 0, 'audit records were written');
  for (const value of secretValues) {
    t.false(logLines.some((line) => line.includes(value)), 'log');
    t.false(answers.some((answer) => answer.includes(value)), 'answer');
    t.false(rows.some((r) => r.row.includes(value)), 'audit');
  }
});

test('the secrets key comes from configuration: the signing key unless KILN_SECRETS_KEY is set, previous keys listed, short ones refused', async (t) => {
  const env = { DATA_DIR: join(tmpdir(), 'kiln-secrets-config'), KILN_SIGNING_KEY: TEST_SIGNING_KEY };
  t.deepEqual((await loadConfig('worker', { ...env, DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/d' })).secretsKeys, { current: TEST_SIGNING_KEY, previous: [] });
  const rotated = await loadConfig('api', { ...env, KILN_SECRETS_KEY: 'k'.repeat(32), KILN_SECRETS_PREVIOUS_KEYS: `${'a'.repeat(32)}, ${'b'.repeat(40)}` });
  t.deepEqual(rotated.secretsKeys, { current: 'k'.repeat(32), previous: ['a'.repeat(32), 'b'.repeat(40)] });
  await t.throwsAsync(loadConfig('api', { ...env, KILN_SECRETS_PREVIOUS_KEYS: 'too-short' }), { message: /KILN_SECRETS_PREVIOUS_KEYS/ });
  await t.throwsAsync(loadConfig('api', { ...env, KILN_SECRETS_KEY: 'too-short' }), { message: /KILN_SECRETS_KEY/ });
});
