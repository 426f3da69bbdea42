// API keys: created once-visible, listed without values, edited, rotated, revoked; scopes; audit.
import test from 'ava';
import { createApiKey, signup, startTestApi, type TestApi, validDeployment } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { CREDENTIAL_CACHE_MS } from '../../control-plane/auth/credential-cache.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

const KEYS = '/v1/settings/api-keys';

test('creating a key shows its full value once; listing never does', async (t) => {
  const { token, organizationId } = await signup(api);
  const res = await api.request('POST', KEYS, { token, body: { name: 'ci', scope: 'deployments_only' } });
  t.is(res.status, 201);
  t.regex(res.body.key, /^sk_test_[0-9A-Za-z]{32}$/);
  t.regex(res.body.id, /^key_/);
  t.like(res.body, { name: 'ci', scope: 'deployments_only', prefix: res.body.key.slice(0, 12), lastUsedAt: null });

  const list = await api.request('GET', `${KEYS}?orgId=${organizationId}`, { token });
  t.is(list.status, 200);
  t.is(list.body.length, 1);
  t.deepEqual(Object.keys(list.body[0]).sort(), ['createdAt', 'id', 'lastUsedAt', 'name', 'prefix', 'scope']);
  t.false(JSON.stringify(list.body).includes(res.body.key));
  // Only the hash is stored.
  const { rows } = await api.pool.query('SELECT * FROM api_key WHERE id = $1', [res.body.id]);
  t.false(JSON.stringify(rows).includes(res.body.key));
});

test('a key authenticates, and its use updates last-used and writes an audit record', async (t) => {
  const { token, userId, organizationId } = await signup(api);
  const key = await createApiKey(api, token, 'full_access');
  const created = await api.request('POST', '/api/deployments', { token: key.key, body: validDeployment() });
  t.is(created.status, 201);
  const listed = await api.request('GET', '/api/deployments', { token: key.key });
  t.is(listed.status, 200);

  // The read's record is written in the next batch, shortly after its answer.
  const rows = await eventually('the read\'s audit record', async () => {
    const found = await api.pool.query('SELECT * FROM audit_log WHERE api_key_id = $1 ORDER BY created_at', [key.id]);
    return found.rows.length === 2 && found.rows;
  });
  t.like(rows[0], { action: 'createDeployment', resource_type: 'deployment', resource_id: created.body.data.id, user_id: userId, organization_id: organizationId, status_code: 201 });
  t.truthy(rows[0].ip_address);
  t.truthy(rows[0].created_at);
  t.like(rows[1], { action: 'listDeployments', status_code: 200 });
  const keys = await api.request('GET', `${KEYS}?orgId=${organizationId}`, { token });
  t.truthy(keys.body[0].lastUsedAt);
});

test('requests with paths and ids longer than a column are audited, cut to fit, and later reads are still recorded', async (t) => {
  const { token } = await signup(api);
  const key = await createApiKey(api, token, 'full_access');
  const long = 'x'.repeat(300);
  t.is((await api.request('GET', `/api/deployments/${long}`, { token: key.key })).status, 400);
  t.is((await api.request('GET', `/api/${long}`, { token: key.key })).status, 404);
  // A NUL (which PostgreSQL text cannot hold) in a path is refused, and its record still written.
  t.is((await api.request('GET', '/api/deployments/%00', { token: key.key })).status, 400);
  t.is((await api.request('DELETE', `/api/deployments/${long}`, { token: key.key })).status, 400);
  t.is((await api.request('GET', '/api/deployments', { token: key.key })).status, 200);
  const rows = await eventually('the five records', async () => {
    const found = await api.pool.query('SELECT action, resource_id, status_code FROM audit_log WHERE api_key_id = $1 ORDER BY created_at', [key.id]);
    return found.rows.length === 5 && found.rows;
  });
  t.truthy(rows.find((r) => r.action === 'getDeployment' && r.resource_id === ''), 'the NUL left out');
  t.is(rows.find((r) => r.action === 'getDeployment' && r.resource_id !== '')?.resource_id, long.slice(0, 255));
  t.is(rows.find((r) => r.action.startsWith('GET /api/x'))?.action, `GET /api/${long}`.slice(0, 255));
  t.is(rows.find((r) => r.action === 'deleteDeployment')?.resource_id, long.slice(0, 255));
  t.truthy(rows.find((r) => r.action === 'listDeployments' && r.status_code === 200));
});

test('a refused request made with a key is audited too', async (t) => {
  const { token } = await signup(api);
  const key = await createApiKey(api, token, 'read_only');
  const res = await api.request('POST', '/api/deployments', { token: key.key, body: validDeployment() });
  t.is(res.status, 403);
  const { rows } = await api.pool.query('SELECT action, status_code FROM audit_log WHERE api_key_id = $1', [key.id]);
  t.deepEqual(rows, [{ action: 'createDeployment', status_code: 403 }]);
});

test('mutations made with a login session are audited, reads are not', async (t) => {
  const { token, userId } = await signup(api);
  const created = await api.request('POST', '/api/deployments', { token, body: validDeployment() });
  await api.request('GET', '/api/deployments', { token });
  const { rows } = await api.pool.query('SELECT action, resource_id, api_key_id, status_code FROM audit_log WHERE user_id = $1', [userId]);
  t.deepEqual(rows, [{ action: 'createDeployment', resource_id: created.body.data.id, api_key_id: null, status_code: 201 }]);
});

test('PATCH renames a key and changes its scope', async (t) => {
  const { token } = await signup(api);
  const key = await createApiKey(api, token, 'read_only');
  const res = await api.request('PATCH', KEYS, { token, body: { id: key.id, name: 'deployer', scope: 'deployments_only' } });
  t.is(res.status, 200);
  t.like(res.body, { id: key.id, name: 'deployer', scope: 'deployments_only' });
  t.is(res.body.key, undefined);
  const create = await api.request('POST', '/api/deployments', { token: key.key, body: validDeployment('after-patch') });
  t.is(create.status, 201);
});

test('PUT rotates: a new value, shown once; the old one stops working', async (t) => {
  const { token } = await signup(api);
  const key = await createApiKey(api, token, 'full_access');
  const res = await api.request('PUT', KEYS, { token, body: { id: key.id } });
  t.is(res.status, 200);
  t.is(res.body.id, key.id);
  t.regex(res.body.key, /^sk_test_[0-9A-Za-z]{32}$/);
  t.not(res.body.key, key.key);
  t.is((await api.request('GET', '/api/deployments', { token: key.key })).status, 401);
  t.is((await api.request('GET', '/api/deployments', { token: res.body.key })).status, 200);
});

test('DELETE revokes: the key is 401 Invalid API key afterwards and leaves the list', async (t) => {
  const { token, organizationId } = await signup(api);
  const key = await createApiKey(api, token, 'full_access');
  const res = await api.request('DELETE', `${KEYS}?id=${key.id}`, { token });
  t.is(res.status, 200);
  t.deepEqual(res.body, { id: key.id, revoked: true });
  const use = await api.request('GET', `/v1/deployments?orgId=${organizationId}`, { token: key.key });
  t.deepEqual(use.body, { error: 'Unauthorized', message: 'Invalid API key', code: 'INVALID_API_KEY', statusCode: 401 });
  t.deepEqual((await api.request('GET', `${KEYS}?orgId=${organizationId}`, { token })).body, []);
  t.is((await api.request('DELETE', `${KEYS}?id=${key.id}`, { token })).status, 404);
});

test('a key just used is refused at once by the replica that narrows, rotates or revokes it', async (t) => {
  const { token } = await signup(api);
  const key = await createApiKey(api, token, 'full_access');
  t.is((await api.request('GET', '/api/deployments', { token: key.key })).status, 200);
  t.is((await api.request('PATCH', KEYS, { token, body: { id: key.id, scope: 'read_only' } })).status, 200);
  t.is((await api.request('POST', '/api/deployments', { token: key.key, body: validDeployment() })).status, 403);
  const rotated = await api.request('PUT', KEYS, { token, body: { id: key.id } });
  t.is((await api.request('GET', '/api/deployments', { token: key.key })).status, 401);
  t.is((await api.request('GET', '/api/deployments', { token: rotated.body.key })).status, 200);
  t.is((await api.request('DELETE', `${KEYS}?id=${key.id}`, { token })).status, 200);
  t.is((await api.request('GET', '/api/deployments', { token: rotated.body.key })).status, 401);
});

test('another replica refuses a revoked key within seconds', async (t) => {
  const other = await startTestApi(import.meta.filename, { databaseUrl: api.databaseUrl });
  t.teardown(() => other.close());
  const { token } = await signup(api);
  const key = await createApiKey(api, token, 'read_only');
  t.is((await other.request('GET', '/api/deployments', { token: key.key })).status, 200);
  const revokedAt = Date.now();
  t.is((await api.request('DELETE', `${KEYS}?id=${key.id}`, { token })).status, 200);
  await eventually('the other replica to refuse the key', async () => (await other.request('GET', '/api/deployments', { token: key.key })).status === 401, 10_000);
  t.true(Date.now() - revokedAt <= CREDENTIAL_CACHE_MS + 2_000);
});

test('records of reads still queued when the API stops are written before it closes', async (t) => {
  const replica = await startTestApi(import.meta.filename, { databaseUrl: api.databaseUrl });
  const { token } = await signup(api);
  const key = await createApiKey(api, token, 'read_only');
  for (let i = 0; i < 3; i++) t.is((await replica.request('GET', '/api/deployments', { token: key.key })).status, 200);
  await replica.close();
  const { rows } = await api.pool.query('SELECT action, status_code FROM audit_log WHERE api_key_id = $1', [key.id]);
  t.deepEqual(rows, Array(3).fill({ action: 'listDeployments', status_code: 200 }));
});

test('bad input: unknown scope 422, missing name 400, missing id 400', async (t) => {
  const { token } = await signup(api);
  const scope = await api.request('POST', KEYS, { token, body: { name: 'x', scope: 'admin' } });
  t.is(scope.status, 422);
  t.regex(scope.body.message, /scope/);
  const name = await api.request('POST', KEYS, { token, body: { scope: 'read_only' } });
  t.is(name.status, 400);
  t.regex(name.body.message, /name/);
  t.is((await api.request('DELETE', KEYS, { token })).status, 400);
  t.is((await api.request('PATCH', KEYS, { token, body: { name: 'x' } })).status, 400);
});

test('every key operation needs a credential', async (t) => {
  for (const method of ['GET', 'POST', 'PATCH', 'PUT', 'DELETE']) {
    const res = await api.request(method, KEYS, method === 'GET' || method === 'DELETE' ? {} : { body: { id: 'key_x', name: 'x', scope: 'read_only' } });
    t.is(res.status, 401, method);
    t.is(res.body.code, 'INVALID_API_KEY');
  }
});

test('scopes: only full access manages keys; read only may list them', async (t) => {
  const { token, organizationId } = await signup(api);
  const deploymentsOnly = await createApiKey(api, token, 'deployments_only');
  const readOnly = await createApiKey(api, token, 'read_only');
  const full = await createApiKey(api, token, 'full_access');
  const forbidden = { error: 'Forbidden', message: 'Insufficient permissions', code: 'INSUFFICIENT_PERMISSIONS', statusCode: 403 };
  t.deepEqual((await api.request('GET', `${KEYS}?orgId=${organizationId}`, { token: deploymentsOnly.key })).body, forbidden);
  t.deepEqual((await api.request('POST', KEYS, { token: deploymentsOnly.key, body: { name: 'x', scope: 'full_access' } })).body, forbidden);
  t.is((await api.request('GET', `${KEYS}?orgId=${organizationId}`, { token: readOnly.key })).status, 200);
  t.deepEqual((await api.request('POST', KEYS, { token: readOnly.key, body: { name: 'x', scope: 'read_only' } })).body, forbidden);
  t.deepEqual((await api.request('DELETE', `${KEYS}?id=${full.id}`, { token: readOnly.key })).body, forbidden);
  t.is((await api.request('POST', KEYS, { token: full.key, body: { name: 'x', scope: 'read_only' } })).status, 201);
});

test('another organization\'s key id is 404 for every operation', async (t) => {
  const a = await signup(api, 'a');
  const b = await signup(api, 'b');
  const bKey = await createApiKey(api, b.token, 'full_access');
  t.is((await api.request('PATCH', KEYS, { token: a.token, body: { id: bKey.id, name: 'stolen' } })).status, 404);
  t.is((await api.request('PUT', KEYS, { token: a.token, body: { id: bKey.id } })).status, 404);
  t.is((await api.request('DELETE', `${KEYS}?id=${bKey.id}`, { token: a.token })).status, 404);
  t.is((await api.request('GET', '/api/deployments', { token: bKey.key })).status, 200);
});

test('a key of the other environment is 401 Invalid API key', async (t) => {
  const { token } = await signup(api);
  const key = await createApiKey(api, token, 'full_access');
  const live = key.key.replace('sk_test_', 'sk_live_');
  const res = await api.request('GET', '/api/deployments', { token: live });
  t.is(res.status, 401);
  t.is(res.body.error.message, 'Invalid API key');
  // And a production control plane rejects this test key.
  const production = await startTestApi(import.meta.filename, { config: { env: 'production', signingKey: 'test-signing-key-0123456789abcdefghijklmnop', endpointDomain: 'x', trustProxy: false, adminEmails: [] } });
  const prod = await production.request('GET', '/api/deployments', { token: key.key });
  t.is(prod.status, 401);
  await production.close();
});

test('a key cannot switch organization with X-Organization-ID', async (t) => {
  const a = await signup(api, 'a');
  const b = await signup(api, 'b');
  const key = await createApiKey(api, a.token, 'full_access');
  const res = await api.request('GET', '/api/deployments', { token: key.key, headers: { 'x-organization-id': b.organizationId } });
  t.is(res.status, 403);
  t.is((await api.request('GET', '/api/deployments', { token: key.key, headers: { 'x-organization-id': a.organizationId } })).status, 200);
});

test('Idempotency-Key on key creation replays the first answer (the same value)', async (t) => {
  const { token, organizationId } = await signup(api);
  const headers = { 'idempotency-key': 'create-key-1' };
  const first = await api.request('POST', KEYS, { token, headers, body: { name: 'ci', scope: 'read_only' } });
  const again = await api.request('POST', KEYS, { token, headers, body: { name: 'ci', scope: 'read_only' } });
  t.is(again.status, 201);
  t.deepEqual(again.body, first.body);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.is((await api.request('GET', `${KEYS}?orgId=${organizationId}`, { token })).body.length, 1);
  // The stored answer holds the key's value, so it rests sealed.
  const { rows } = await api.pool.query('SELECT response_body FROM idempotency_record');
  t.false(JSON.stringify(rows).includes(first.body.key));
  const other = await api.request('POST', KEYS, { token, headers, body: { name: 'other', scope: 'read_only' } });
  t.is(other.status, 409);
  t.is(other.body.code, 'IDEMPOTENCY_KEY_REUSED');
});
