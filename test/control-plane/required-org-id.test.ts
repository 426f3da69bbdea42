// The reference rows whose tables list `orgId` require it (every query parameter listed there is
// required): missing or empty is 400 naming it, in the reference error shape; the caller's own
// organization answers; another organization's is refused as before. The list is read from the app's
// routes, so a row that stops requiring it (or starts) fails here.
import test from 'ava';
import { createApiKey, signup, startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

/** The rows Kiln serves whose reference table lists orgId; the SSO configuration rows answer 404 while none is stored. */
const ROWS: ReadonlyArray<[path: string, status: number]> = [
  ['/v1/auth/sso', 404],
  ['/v1/deployments', 200],
  // Requested as written, `{id}` names no deployment.
  ['/v1/deployments/{id}/metrics', 404],
  ['/v1/deployments/{id}/pricing', 404],
  ['/v1/deployments/{id}/optimization', 404],
  ['/v1/deployments/{id}/logs', 404],
  // No Prometheus beside the test API: the metric routes are 503 once orgId is given.
  ['/v1/metrics', 503],
  ['/v1/monitoring/metrics', 503],
  ['/v1/dashboard/metrics', 503],
  ['/v1/monitoring/analytics', 503],
  ['/v1/settings/profile', 200],
  ['/v1/settings/api-keys', 200],
  ['/v1/settings/organization', 200],
  ['/v1/enterprise/audit', 200],
  ['/v1/enterprise/audit/export', 200],
  ['/v1/enterprise/sso/configure', 404],
  ['/v1/enterprise/sso/verify', 404],
  ['/v1/enterprise/sso/providers', 200],
  ['/v1/gpu-types', 200],
  ['/v1/models/search', 200],
  // Requested as written, `{id}` is no model reference: 400 INVALID_MODEL once orgId is given.
  ['/v1/models/{id}', 400],
  ['/v1/recovery', 200],
  ['/v1/credits', 200],
  ['/v1/billing/invoices', 200],
  // Requested as written, `{id}` names no invoice: 404 once orgId is given.
  ['/v1/billing/invoices/{id}/download', 404],
  ['/v1/recovery/circuits', 200],
  ['/v1/onboarding', 200],
  ['/v1/onboarding/steps', 200],
  ['/v1/onboarding/providers', 200],
  ['/v1/templates/deploy', 200],
  ['/v1/models/templates', 200],
  // Requested as written, `{id}` names no template: 404 once orgId is given.
  ['/v1/templates/{id}/star', 404],
  ['/v1/templates/{id}/deploy', 404],
  ['/v1/alerts', 200],
  ['/v1/monitoring/alerts', 200],
  ['/v1/cost-controls/alerts', 200],
  ['/v1/monitoring/webhooks', 200],
  ['/v1/secrets', 200],
  // Asked without Upgrade: websocket, the socket route answers 426 once orgId is given.
  ['/v1/ws', 426],
  ['/v1/ws/health', 200],
  ['/v1/activity', 200],
  ['/v1/notifications', 200],
];

const missingOrgId = { error: 'Bad Request', message: 'Invalid query parameter orgId: required', code: 'INVALID_REQUEST', statusCode: 400 };

test('exactly these rows require orgId, and the OpenAPI document says so', async (t) => {
  const requiring = api.app.routes
    .filter((route) => route.query?.safeParse({}).error?.issues.some((issue: { path: PropertyKey[] }) => issue.path[0] === 'orgId'))
    .map((route) => `${route.method} ${route.path}`);
  // Beside them, Kiln's own public SSO login start names the organization to sign in to.
  t.deepEqual(requiring.sort(), [...ROWS.map(([path]) => `GET ${path}`), 'GET /v1/auth/sso/login'].sort());

  const { paths } = (await api.request('GET', '/v1/openapi')).body;
  for (const [path, item] of Object.entries<Record<string, { parameters?: Array<{ name: string; in: string; required?: boolean }> }>>(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const orgId = operation.parameters?.find((p) => p.name === 'orgId' && p.in === 'query');
      if (orgId) t.is(orgId.required ?? false, requiring.includes(`${method.toUpperCase()} ${path}`), `${method} ${path}`);
    }
  }
});

test('without orgId, or with an empty or repeated one, each row is 400 naming orgId in the reference shape', async (t) => {
  t.deepEqual((await api.request('GET', '/v1/auth/sso/login')).body, missingOrgId, 'the public SSO login start');
  const owner = await signup(api, 'no-org');
  const key = await createApiKey(api, owner.token, 'full_access');
  for (const [path] of ROWS) {
    for (const token of [owner.token, key.key]) {
      t.deepEqual((await api.request('GET', path, { token })).body, missingOrgId, path);
      const empty = await api.request('GET', `${path}?orgId=`, { token });
      t.deepEqual(empty.body, missingOrgId, `${path}?orgId=`);
    }
    const repeated = await api.request('GET', `${path}?orgId=${owner.organizationId}&orgId=${owner.organizationId}`, { token: owner.token });
    t.is(repeated.status, 400, `${path} repeated`);
    t.regex(repeated.body.message, /^Invalid query parameter orgId: /);
  }
});

test('with the caller\'s own orgId each row answers, to a session and to an API key', async (t) => {
  const owner = await signup(api, 'own-org');
  const key = await createApiKey(api, owner.token, 'full_access');
  for (const [path, status] of ROWS) {
    for (const token of [owner.token, key.key]) {
      const res = await api.request('GET', `${path}?orgId=${owner.organizationId}`, { token });
      t.is(res.status, status, `${path} ${JSON.stringify(res.body)}`);
    }
  }
});

test('no credential is 401 with or without orgId; another organization\'s orgId is 403; a narrower scope is 403', async (t) => {
  const owner = await signup(api, 'mine');
  const other = await signup(api, 'theirs');
  const key = await createApiKey(api, owner.token, 'full_access');
  const deploymentsOnly = await createApiKey(api, owner.token, 'deployments_only');
  for (const [path] of ROWS) {
    for (const query of ['', `?orgId=${owner.organizationId}`]) {
      const res = await api.request('GET', `${path}${query}`);
      t.is(res.status, 401, `${path}${query}`);
      t.is(res.body.code, 'INVALID_API_KEY');
    }
    for (const token of [owner.token, key.key]) {
      const foreign = await api.request('GET', `${path}?orgId=${other.organizationId}`, { token });
      t.is(foreign.status, 403, `${path} as another organization`);
      t.is(foreign.body.code, 'INSUFFICIENT_PERMISSIONS');
    }
  }
  // A deployments-only key reads deployments (their live socket too), the GPU catalog and templates in its organization, nothing else here.
  for (const [path, status] of ROWS) {
    const res = await api.request('GET', `${path}?orgId=${owner.organizationId}`, { token: deploymentsOnly.key });
    const readable = ['/v1/deployments', '/v1/deployments/{id}/metrics', '/v1/deployments/{id}/pricing', '/v1/deployments/{id}/optimization', '/v1/deployments/{id}/logs', '/v1/metrics', '/v1/monitoring/metrics', '/v1/dashboard/metrics', '/v1/monitoring/analytics', '/v1/gpu-types', '/v1/models/search', '/v1/models/{id}', '/v1/recovery', '/v1/recovery/circuits',
      '/v1/templates/deploy', '/v1/models/templates', '/v1/templates/{id}/star', '/v1/templates/{id}/deploy', '/v1/ws'];
    t.is(res.status, readable.includes(path) ? status : 403, path);
  }
});

test('the platform surface keeps X-Organization-ID: its list needs no orgId', async (t) => {
  const owner = await signup(api, 'platform');
  t.is((await api.request('GET', '/api/deployments', { token: owner.token })).status, 200);
  t.is((await api.request('GET', '/api/deployments', { token: owner.token, headers: { 'x-organization-id': owner.organizationId } })).status, 200);
});

test('orgId and X-Organization-ID naming different organizations is 400 naming orgId, even when both are the caller\'s', async (t) => {
  const owner = await signup(api, 'both');
  const other = await signup(api, 'elsewhere');
  await api.pool.query(`INSERT INTO membership (id, created_at, organization_id, user_id, role) VALUES ($1, now(), $2, $3, 'admin')`,
    [`mem_both_${owner.userId.slice(4)}`, other.organizationId, owner.userId]);
  const key = await createApiKey(api, owner.token, 'full_access');
  for (const [orgId, header] of [[owner.organizationId, other.organizationId], [other.organizationId, owner.organizationId]]) {
    for (const token of [owner.token, key.key]) {
      const res = await api.request('GET', `/v1/deployments?orgId=${orgId}`, { token, headers: { 'x-organization-id': header! } });
      t.is(res.status, 400);
      t.like(res.body, { code: 'INVALID_REQUEST', message: 'orgId names another organization than X-Organization-ID' });
    }
  }
  const agreeing = await api.request('GET', `/v1/deployments?orgId=${other.organizationId}`, { token: owner.token, headers: { 'x-organization-id': other.organizationId } });
  t.is(agreeing.status, 200);
});
