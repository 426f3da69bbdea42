// Service role keys: made, rotated and revoked by platform administrators only; a request with one acts on
// the organization X-Organization-ID names, is audited under the key, and is refused from a browser.
import { createHash } from 'node:crypto';
import test from 'ava';
import { createServiceKeyService } from '../../control-plane/service-keys/service.ts';
import { startAdminApi, type Admin } from '../support/admin.ts';
import { eventually } from '../support/eventually.ts';
import { createApiKey, routePermissions, signup, validDeployment, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
let admin: Admin;
test.before(async () => { ({ api, admin } = await startAdminApi(import.meta.filename)); });
test.after.always(() => api?.close());

async function createServiceKey(name = 'billing-sync') {
  const res = await api.request('POST', '/v1/admin/service-keys', { token: admin.token, body: { name } });
  if (res.status !== 201) throw new Error(`service key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; key: string; prefix: string; createdBy: string; lastUsedAt: string | null };
}

/** The options of a request made with a service key, acting on `organizationId`. */
const acting = (key: string, organizationId: string, headers: Record<string, string> = {}) => ({ token: key, headers: { 'x-organization-id': organizationId, ...headers } });

async function deploy(token: string, name: string) {
  const res = await api.request('POST', '/v1/deployments', { token, body: validDeployment(name) });
  if (res.status !== 201) throw new Error(`deploy failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

test('an administrator creates a key shown once and stored as a hash; it acts on the named organization with full access', async (t) => {
  const owner = await signup(api, 'svc-owner');
  const created = await createServiceKey();
  t.regex(created.key, /^srk_test_[0-9A-Za-z]{40}$/);
  t.like(created, { prefix: created.key.slice(0, 13), createdBy: admin.userId, lastUsedAt: null });
  t.regex(created.id, /^svk_/);
  const row = (await api.pool.query('SELECT * FROM service_key WHERE id = $1', [created.id])).rows[0];
  t.is(row.key_hash, createHash('sha256').update(created.key).digest('hex'));
  t.false(JSON.stringify(row).includes(created.key), 'the value itself is not stored');

  const listed = await api.request('GET', '/v1/admin/service-keys', { token: admin.token });
  t.is(listed.status, 200);
  const item = listed.body.find((k: { id: string }) => k.id === created.id);
  t.like(item, { name: 'billing-sync', prefix: created.prefix });
  t.false('key' in item, 'a listing never shows the value');

  const made = await api.request('POST', '/api/deployments', { ...acting(created.key, owner.organizationId), body: validDeployment('from-a-server') });
  t.is(made.status, 201, JSON.stringify(made.body));
  t.is((await api.pool.query('SELECT organization_id FROM deployment WHERE id = $1', [made.body.data.id])).rows[0].organization_id, owner.organizationId);
  const mine = await api.request('GET', `/api/deployments/${made.body.data.id}`, { token: owner.token });
  t.is(mine.status, 200, 'the organization sees what the key made for it');
  // Administration and the organization's settings alike.
  t.is((await api.request('GET', '/v1/admin/customers', acting(created.key, owner.organizationId))).status, 200);
  t.is((await api.request('GET', '/api/webhooks', acting(created.key, owner.organizationId))).status, 200);
  // It is no person: no profile, and no API keys (which act as the member who made them).
  t.is((await api.request('GET', '/v1/settings/profile', acting(created.key, owner.organizationId))).status, 403);
  t.is((await api.request('POST', '/v1/settings/api-keys', { ...acting(created.key, owner.organizationId), body: { name: 'x', scope: 'read_only' } })).status, 403);

  // Every use is audited, reads too: the record names the key and the organization acted on.
  await eventually('the service key\'s audit records', async () => (await api.pool.query(
    'SELECT count(*)::int AS n FROM audit_log WHERE api_key_id = $1 AND organization_id = $2', [created.id, owner.organizationId])).rows[0].n === 5);
  const records = (await api.pool.query('SELECT action, user_id, status_code FROM audit_log WHERE api_key_id = $1 ORDER BY created_at', [created.id])).rows;
  t.like(records[0], { action: 'createDeployment', user_id: admin.userId, status_code: 201 });
});

test('the principal is a service principal, for the database role that bypasses row-level security', async (t) => {
  const owner = await signup(api, 'svc-principal');
  const created = await createServiceKey('principal');
  const principal = await createServiceKeyService({ env: 'development' }).resolve(api.orm.em.fork(), created.key, owner.organizationId);
  t.like(principal, { kind: 'service', organizationId: owner.organizationId, apiKeyId: created.id, platformAdmin: true, scope: 'full_access', role: 'owner' });
});

test('bad input: a missing or empty name, an unknown field; the organization header missing, unknown or contradicted', async (t) => {
  const owner = await signup(api, 'svc-input');
  t.is((await api.request('POST', '/v1/admin/service-keys', { token: admin.token, body: {} })).status, 400);
  t.is((await api.request('POST', '/v1/admin/service-keys', { token: admin.token, body: { name: '  ' } })).status, 422);
  t.is((await api.request('POST', '/v1/admin/service-keys', { token: admin.token, body: { name: 'x', organizationId: owner.organizationId } })).status, 400);
  t.is((await api.request('POST', '/v1/admin/service-keys/svk_unknown/rotate', { token: admin.token })).status, 404);
  t.is((await api.request('DELETE', '/v1/admin/service-keys/svk_unknown', { token: admin.token })).status, 404);

  const { key } = await createServiceKey('input');
  const missing = await api.request('GET', '/api/deployments', { token: key });
  t.is(missing.status, 400);
  t.like(missing.body.error, { code: 'INVALID_REQUEST', details: { header: 'X-Organization-ID' } });
  t.regex(missing.body.error.message, /X-Organization-ID/);
  const unknown = await api.request('GET', '/api/deployments', acting(key, 'org_doesnotexist0000000'));
  t.is(unknown.status, 404);
  t.is(unknown.body.error.code, 'NOT_FOUND');
  t.is((await api.request('GET', '/api/deployments', acting(key, 'not an id'))).status, 404);
  const other = await signup(api, 'svc-input-other');
  t.is((await api.request('GET', `/v1/deployments?orgId=${other.organizationId}`, acting(key, owner.organizationId))).status, 400);
  t.is((await api.request('GET', `/v1/deployments?orgId=${owner.organizationId}`, acting(key, owner.organizationId))).status, 200);
});

test('no or a bad credential is 401; an owner, an API key of any scope and a service key itself cannot make one', async (t) => {
  const owner = await signup(api, 'svc-roles');
  const body = { name: 'not allowed' };
  t.is((await api.request('POST', '/v1/admin/service-keys', { body })).status, 401);
  t.is((await api.request('GET', '/v1/admin/service-keys')).status, 401);
  const forged = await api.request('GET', '/api/deployments', acting(`srk_test_${'A'.repeat(40)}`, owner.organizationId));
  t.is(forged.status, 401);
  t.is(forged.body.error.code, 'INVALID_API_KEY');
  t.is((await api.request('GET', '/api/deployments', acting(`srk_live_${'A'.repeat(40)}`, owner.organizationId))).status, 401, 'a production key in development');

  t.is((await api.request('POST', '/v1/admin/service-keys', { token: owner.token, body })).status, 403, 'an organization owner');
  t.is((await api.request('GET', '/v1/admin/service-keys', { token: owner.token })).status, 403);
  const ownersKey = await createApiKey(api, owner.token, 'full_access');
  t.is((await api.request('POST', '/v1/admin/service-keys', { token: ownersKey.key, body })).status, 403, 'an owner\'s full-access API key');
  const adminsReadOnly = await createApiKey(api, admin.token, 'read_only');
  t.is((await api.request('POST', '/v1/admin/service-keys', { token: adminsReadOnly.key, body })).status, 403, 'an administrator\'s read-only key');
  t.is((await api.request('GET', '/v1/admin/service-keys', { token: adminsReadOnly.key })).status, 200, 'which may list them');

  const service = await createServiceKey('no successors');
  const minted = await api.request('POST', '/v1/admin/service-keys', { ...acting(service.key, owner.organizationId), body });
  t.is(minted.status, 403);
  t.regex(minted.body.message, /service role key/);
  t.is((await api.request('POST', `/v1/admin/service-keys/${service.id}/rotate`, acting(service.key, owner.organizationId))).status, 403);
  t.is((await api.request('DELETE', `/v1/admin/service-keys/${service.id}`, acting(service.key, owner.organizationId))).status, 403);
  t.is((await api.pool.query(`SELECT count(*)::int AS n FROM service_key WHERE name = 'not allowed'`)).rows[0].n, 0);
});

test('walking every route, a service key is refused exactly a person\'s routes and the management of service keys', async (t) => {
  const owner = await signup(api, 'svc-walk');
  const { key } = await createServiceKey('walker');
  const personal = ['profile:read', 'profile:write', 'api-keys:write'];
  const mismatches: string[] = [];
  for (const [route, permission] of Object.entries(routePermissions(api.app.routes))) {
    const [method, path] = route.split(' ') as [string, string];
    // A valid body where the refusal comes from the service, after validation.
    const body = route === 'POST /v1/admin/service-keys' ? { name: 'successor' } : undefined;
    const res = await api.request(method, path.replace(/\{\w+\}/g, 'unknown'), { ...acting(key, owner.organizationId), body });
    const refused = personal.includes(permission) || (path.startsWith('/v1/admin/service-keys') && method !== 'GET');
    if ((res.status === 403) !== refused) mismatches.push(`${route} answered ${res.status}, expected ${refused ? 'refused' : 'allowed'}`);
  }
  t.deepEqual(mismatches, []);
});

test('acting on one organization reads nothing of another unless X-Organization-ID names it', async (t) => {
  const a = await signup(api, 'svc-a');
  const b = await signup(api, 'svc-b');
  const inA = await deploy(a.token, 'in-a');
  const inB = await deploy(b.token, 'in-b');
  const { key } = await createServiceKey('tenants');

  t.is((await api.request('GET', `/api/deployments/${inB}`, acting(key, a.organizationId))).status, 404);
  t.is((await api.request('DELETE', `/api/deployments/${inB}`, acting(key, a.organizationId))).status, 404);
  const listA = await api.request('GET', '/api/deployments', acting(key, a.organizationId));
  t.deepEqual(listA.body.data.map((d: { id: string }) => d.id), [inA]);
  t.is((await api.request('GET', `/api/deployments/${inB}`, acting(key, b.organizationId))).status, 200);
  const listB = await api.request('GET', '/api/deployments', acting(key, b.organizationId));
  t.deepEqual(listB.body.data.map((d: { id: string }) => d.id), [inB]);
});

test('refused from a browser: a request carrying Origin or Sec-Fetch-Site is 403 and changes nothing', async (t) => {
  const owner = await signup(api, 'svc-browser');
  const { key } = await createServiceKey('leaked');
  const fromPage = await api.request('POST', '/api/deployments', { ...acting(key, owner.organizationId, { origin: 'https://app.example.com' }), body: validDeployment('from-a-page') });
  t.is(fromPage.status, 403);
  t.is(fromPage.body.error.code, 'INSUFFICIENT_PERMISSIONS');
  t.regex(fromPage.body.error.message, /server-to-server.*browser \(Origin header\)/);
  t.is((await api.request('GET', '/api/deployments', acting(key, owner.organizationId, { 'sec-fetch-site': 'same-origin' }))).status, 403);
  t.is((await api.pool.query('SELECT count(*)::int AS n FROM deployment WHERE organization_id = $1', [owner.organizationId])).rows[0].n, 0);
  t.is((await api.request('GET', '/api/deployments', acting(key, owner.organizationId))).status, 200, 'the same key from a server');
});

test('rotation replaces the value at once; revocation ends the key', async (t) => {
  const owner = await signup(api, 'svc-rotate');
  const created = await createServiceKey('rotating');
  const rotated = await api.request('POST', `/v1/admin/service-keys/${created.id}/rotate`, { token: admin.token });
  t.is(rotated.status, 200);
  t.is(rotated.body.id, created.id);
  t.not(rotated.body.key, created.key);
  t.truthy(rotated.body.rotatedAt);
  const old = await api.request('GET', '/api/deployments', acting(created.key, owner.organizationId));
  t.is(old.status, 401);
  t.is(old.body.error.message, 'Invalid API key');
  t.is((await api.request('GET', '/api/deployments', acting(rotated.body.key, owner.organizationId))).status, 200);

  const revoked = await api.request('DELETE', `/v1/admin/service-keys/${created.id}`, { token: admin.token });
  t.is(revoked.status, 200);
  t.deepEqual(revoked.body, { id: created.id, revoked: true });
  t.is((await api.request('GET', '/api/deployments', acting(rotated.body.key, owner.organizationId))).status, 401);
  t.false((await api.request('GET', '/v1/admin/service-keys', { token: admin.token })).body.some((k: { id: string }) => k.id === created.id));
  t.is((await api.request('DELETE', `/v1/admin/service-keys/${created.id}`, { token: admin.token })).status, 404, 'once');
});

test('the security report lists service keys with their last use', async (t) => {
  const owner = await signup(api, 'svc-report');
  const used = await createServiceKey('used');
  const unused = await createServiceKey('unused');
  const before = (await api.request('GET', '/v1/admin/security', { token: admin.token })).body;
  t.like(before.serviceKeys.items.find((k: { id: string }) => k.id === used.id), { name: 'used', prefix: used.prefix, createdBy: admin.userId, lastUsedAt: null });

  const started = Date.now();
  t.is((await api.request('GET', '/api/deployments', acting(used.key, owner.organizationId))).status, 200);
  const report = await api.request('GET', '/v1/admin/security', { token: admin.token });
  t.is(report.status, 200);
  const { items, total } = report.body.serviceKeys;
  t.true(total >= 2);
  const lastUse = Date.parse(items.find((k: { id: string }) => k.id === used.id).lastUsedAt);
  t.true(lastUse >= started - 1000 && lastUse <= Date.now() + 1000, 'used just now');
  t.is(items.find((k: { id: string }) => k.id === unused.id).lastUsedAt, null);

  await api.request('DELETE', `/v1/admin/service-keys/${unused.id}`, { token: admin.token });
  const after = (await api.request('GET', '/v1/admin/security', { token: admin.token })).body;
  t.false(after.serviceKeys.items.some((k: { id: string }) => k.id === unused.id), 'a revoked key leaves the report');
});
