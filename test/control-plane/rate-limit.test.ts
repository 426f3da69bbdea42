// Rate limits: headers on every answer, 429 with Retry-After, per organization and per client address.
import test from 'ava';
import { PLAN_RATE_LIMITS, PLANS, type Plan, type PlanLimit } from '../../catalog/plans.ts';
import { createApiKey, signup, startTestApi } from '../support/control-plane.ts';

// Tiny limits: 3 a minute, bursting to 5. Signing up (unauthenticated) costs the client address one.
const TINY = { perMinute: 3, burst: 5 };
const tiny = { rateLimits: Object.fromEntries(PLANS.map((plan) => [plan, TINY])) as Record<Plan, PlanLimit> };

test('the free plan\'s limit is announced on every answer, success or failure', async (t) => {
  const api = await startTestApi(import.meta.filename, { rateLimits: PLAN_RATE_LIMITS });
  t.teardown(() => api.close());
  const { token } = await signup(api);
  const answers = [
    await api.request('GET', '/api/deployments', { token }),
    await api.request('GET', '/api/deployments', { token }),
    await api.request('GET', '/api/nothing', { token }),
    await api.request('DELETE', '/v1/gpu-types', { token }),
    await api.request('GET', '/v1/deployments'),
  ];
  t.deepEqual(answers.map((r) => r.status), [200, 200, 404, 405, 401]);
  for (const res of answers) {
    t.is(res.headers.get('x-ratelimit-limit'), '60');
    t.regex(res.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/);
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    t.true(reset > Date.now() / 1000 && reset <= Date.now() / 1000 + 61);
  }
  t.is(Number(answers[1]!.headers.get('x-ratelimit-remaining')), Number(answers[0]!.headers.get('x-ratelimit-remaining')) - 1);
});

test('past the burst an API key gets 429 with Retry-After, in each format', async (t) => {
  const api = await startTestApi(import.meta.filename, tiny);
  t.teardown(() => api.close());
  const { token } = await signup(api);
  const key = await createApiKey(api, token, 'full_access');
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await api.request('GET', '/api/deployments', { token: key.key })).status);
  // The key's own counter allows five; the organization's already counted the key creation.
  t.deepEqual(statuses.slice(0, 4), [200, 200, 200, 200]);
  const limited = await api.request('GET', '/api/deployments', { token: key.key });
  t.is(limited.status, 429);
  t.deepEqual(limited.body.error.code, 'RATE_LIMIT_EXCEEDED');
  t.true(Number(limited.headers.get('retry-after')) >= 1);
  t.is(limited.headers.get('x-ratelimit-remaining'), '0');
  const reference = await api.request('GET', '/v1/deployments', { token: key.key });
  t.is(reference.status, 429);
  t.like(reference.body, { error: 'Too Many Requests', code: 'RATE_LIMIT_EXCEEDED', statusCode: 429 });
});

test('the organization\'s limit is shared by its credentials; other organizations are unaffected', async (t) => {
  const api = await startTestApi(import.meta.filename, { rateLimits: { ...tiny.rateLimits, free: { perMinute: 10, burst: 10 } } });
  t.teardown(() => api.close());
  const a = await signup(api, 'a');
  const b = await signup(api, 'b');
  const key = await createApiKey(api, a.token, 'full_access');
  // Session and key of one organization draw on the same organization counter (1 used by the key creation).
  for (let i = 0; i < 9; i++) await api.request('GET', `/v1/gpu-types?orgId=${a.organizationId}`, { token: i % 2 ? key.key : a.token });
  t.is((await api.request('GET', `/v1/gpu-types?orgId=${a.organizationId}`, { token: key.key })).status, 429);
  t.is((await api.request('GET', `/v1/gpu-types?orgId=${a.organizationId}`, { token: a.token })).status, 429);
  t.is((await api.request('GET', `/v1/gpu-types?orgId=${b.organizationId}`, { token: b.token })).status, 200);
});

test('calls without a credential are limited per client address', async (t) => {
  const api = await startTestApi(import.meta.filename, tiny);
  t.teardown(() => api.close());
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await api.request('GET', '/api/health')).status);
  t.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
  const limited = await api.request('POST', '/v1/auth/signin', { body: { email: 'a@b.co', password: 'whatever1' } });
  t.is(limited.status, 429);
  t.truthy(limited.headers.get('retry-after'));
});

test('behind a trusted proxy, clients are told apart by X-Forwarded-For', async (t) => {
  const api = await startTestApi(import.meta.filename, { ...tiny, config: { env: 'development', signingKey: 'test-signing-key-0123456789abcdefghijklmnop', endpointDomain: 'x', trustProxy: true, adminEmails: [] } });
  t.teardown(() => api.close());
  const from = (address: string) => api.request('GET', '/api/health', { headers: { 'x-forwarded-for': address } });
  for (let i = 0; i < 5; i++) t.is((await from('203.0.113.1')).status, 200);
  t.is((await from('203.0.113.1')).status, 429);
  t.is((await from('203.0.113.2')).status, 200);
});

test('requests arriving together never get past the budget', async (t) => {
  const api = await startTestApi(import.meta.filename, tiny);
  t.teardown(() => api.close());
  const { token } = await signup(api);
  const key = await createApiKey(api, token, 'full_access');
  const statuses = await Promise.all(Array.from({ length: 12 }, () => api.request('GET', '/api/deployments', { token: key.key }).then((r) => r.status)));
  // The organization's counter allows five, one of them already used by the key creation.
  t.is(statuses.filter((s) => s === 200).length, 4);
  t.is(statuses.filter((s) => s === 429).length, 8);
});

test('two replicas on one database share one budget', async (t) => {
  const a = await startTestApi(import.meta.filename, tiny);
  t.teardown(() => a.close());
  const b = await startTestApi(import.meta.filename, { ...tiny, databaseUrl: a.databaseUrl });
  t.teardown(() => b.close());
  const { token } = await signup(a);
  const key = await createApiKey(a, token, 'full_access');
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await (i % 2 ? b : a).request('GET', '/api/deployments', { token: key.key })).status);
  t.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
  const remaining = await b.request('GET', '/v1/gpu-types', { token });
  t.is(remaining.status, 429);
  t.is(remaining.headers.get('x-ratelimit-remaining'), '0');
});
