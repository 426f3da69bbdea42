// GET /v1/deployments/{id}/metrics and /pricing, GET /v1/monitoring/metrics, GET /v1/metrics and GET /v1/dashboard/metrics over HTTP, without a metrics store: the range rules, another organization's
// deployment, credentials, and a Prometheus that cannot be reached (503 with Retry-After, never a 500). The
// series themselves, read from a real Prometheus scraping the model servers, are tested end to end
// (test/e2e/lifecycle.test.ts).
import test from 'ava';
import { createApiKey, signup, signupWithDeployment, startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

test('a Prometheus that cannot be reached is 503 with Retry-After, in the reference error format', async (t) => {
  const { token, organizationId, id } = await signupWithDeployment(api);
  const res = await api.request('GET', `/v1/deployments/${id}/metrics?orgId=${organizationId}`, { token });
  t.is(res.status, 503);
  t.is(res.headers.get('retry-after'), '10');
  t.like(res.body, { code: 'SERVICE_UNAVAILABLE', message: 'The metrics store (Prometheus) is unavailable: try again shortly', statusCode: 503 });
  for (const path of [`/v1/monitoring/metrics?orgId=${organizationId}`, `/v1/metrics?orgId=${organizationId}`, `/v1/deployments/${id}/pricing?orgId=${organizationId}`, `/v1/dashboard/metrics?orgId=${organizationId}`, `/v1/monitoring/analytics?orgId=${organizationId}`]) {
    const other = await api.request('GET', path, { token });
    t.is(other.status, 503, path);
    t.is(other.headers.get('retry-after'), '10');
  }
});

test('the organization-wide routes: orgId required, the range checked, no credential 401, another organization\'s orgId 403', async (t) => {
  const { token, organizationId } = await signupWithDeployment(api);
  const other = await signup(api);
  t.is((await api.request('GET', '/v1/monitoring/metrics', { token })).body.message, 'Invalid query parameter orgId: required');
  t.is((await api.request('GET', '/v1/metrics', { token })).body.message, 'Invalid query parameter orgId: required');
  t.is((await api.request('GET', '/v1/dashboard/metrics', { token })).body.message, 'Invalid query parameter orgId: required');
  t.is((await api.request('GET', '/v1/monitoring/analytics', { token })).body.message, 'Invalid query parameter orgId: required');
  t.is((await api.request('GET', `/v1/monitoring/analytics?orgId=${organizationId}&from=2026-11-24T10:00:00Z&to=2026-11-24T09:00:00Z`, { token })).status, 400);
  t.is((await api.request('GET', `/v1/dashboard/metrics?orgId=${organizationId}`)).status, 401);
  t.is((await api.request('GET', `/v1/dashboard/metrics?orgId=${organizationId}`, { token: other.token })).status, 403);
  t.is((await api.request('GET', `/v1/monitoring/metrics?orgId=${organizationId}&step=-5`, { token })).status, 400);
  t.is((await api.request('GET', `/v1/metrics?orgId=${organizationId}&step=5`, { token })).status, 400, 'GET /v1/metrics takes no range');
  t.is((await api.request('GET', `/v1/metrics?orgId=${organizationId}`)).status, 401);
  t.is((await api.request('GET', `/v1/metrics?orgId=${organizationId}`, { token: other.token })).status, 403);
});

test('the range is checked: from before to, at most 31 days, at most 11,000 points a series; orgId is required', async (t) => {
  const { token, organizationId, id } = await signupWithDeployment(api);
  const path = (query: string) => `/v1/deployments/${id}/metrics?orgId=${organizationId}&${query}`;
  const reversed = await api.request('GET', path('from=2026-11-24T10:00:00Z&to=2026-11-24T09:00:00Z'), { token });
  t.is(reversed.status, 400);
  t.is(reversed.body.message, 'Invalid query parameter from: must be before to');
  t.is((await api.request('GET', path('from=2026-09-01T00:00:00Z&to=2026-11-01T00:00:00Z'), { token })).body.message,
    'Invalid query parameter from: the range may span at most 31 days');
  t.is((await api.request('GET', path('from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&step=1'), { token })).body.message,
    'Invalid query parameter step: too small for the range: at most 11000 points per series');
  t.is((await api.request('GET', path('step=0'), { token })).status, 400);
  t.is((await api.request('GET', path('from=yesterday'), { token })).status, 400);
  t.is((await api.request('GET', `/v1/deployments/${id}/metrics`, { token })).body.message, 'Invalid query parameter orgId: required');
});

test('another organization\'s deployment is 404; no credential 401; a read-only key may read', async (t) => {
  const owner = await signupWithDeployment(api);
  const other = await signup(api);
  t.is((await api.request('GET', `/v1/deployments/${owner.id}/metrics?orgId=${other.organizationId}`, { token: other.token })).status, 404);
  t.is((await api.request('GET', `/v1/deployments/${owner.id}/pricing?orgId=${other.organizationId}`, { token: other.token })).status, 404);
  t.is((await api.request('GET', `/v1/deployments/${owner.id}/pricing`, { token: owner.token })).body.message, 'Invalid query parameter orgId: required');
  t.is((await api.request('GET', `/v1/deployments/${owner.id}/pricing?orgId=${owner.organizationId}&month=2026-11`, { token: owner.token })).status, 400);
  t.is((await api.request('GET', `/v1/deployments/${owner.id}/metrics?orgId=${owner.organizationId}`)).status, 401);
  const readOnly = await createApiKey(api, owner.token, 'read_only');
  // Authorized, then the store is away: 503, not 403.
  t.is((await api.request('GET', `/v1/deployments/${owner.id}/metrics?orgId=${owner.organizationId}`, { token: readOnly.key })).status, 503);
});
