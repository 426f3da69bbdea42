// Rate limits: headers on every answer, 429 with Retry-After, per credential and per organization (inference and
// management apart), and per client address.
import test from 'ava';
import { PLAN_RATE_LIMITS, PLANS, type Plan, type PlanLimit } from '../../catalog/plans.ts';
import { ORGANIZATION_HEADROOM } from '../../control-plane/http/rate-limit.ts';
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
  // The key's own counter allows five, bursting.
  t.deepEqual(statuses, [200, 200, 200, 200, 200]);
  const limited = await api.request('GET', '/api/deployments', { token: key.key });
  t.is(limited.status, 429);
  t.deepEqual(limited.body.error.code, 'RATE_LIMIT_EXCEEDED');
  t.true(Number(limited.headers.get('retry-after')) >= 1);
  t.is(limited.headers.get('x-ratelimit-remaining'), '0');
  const reference = await api.request('GET', '/v1/deployments', { token: key.key });
  t.is(reference.status, 429);
  t.like(reference.body, { error: 'Too Many Requests', code: 'RATE_LIMIT_EXCEEDED', statusCode: 429 });
});

test('one key\'s traffic never refuses another credential\'s calls, nor its own calls of the other lane', async (t) => {
  const api = await startTestApi(import.meta.filename, tiny);
  t.teardown(() => api.close());
  const a = await signup(api, 'a');
  const b = await signup(api, 'b');
  const key = await createApiKey(api, a.token, 'full_access');
  for (let i = 0; i < 5; i++) t.is((await api.request('GET', `/v1/gpu-types?orgId=${a.organizationId}`, { token: key.key })).status, 200);
  const limited = await api.request('GET', `/v1/gpu-types?orgId=${a.organizationId}`, { token: key.key });
  t.is(limited.status, 429);
  t.is(limited.body.message, 'Rate limit exceeded for management requests');
  // The same organization's session, and another organization, are not refused.
  t.is((await api.request('GET', `/v1/gpu-types?orgId=${a.organizationId}`, { token: a.token })).status, 200);
  t.is((await api.request('GET', `/v1/gpu-types?orgId=${b.organizationId}`, { token: b.token })).status, 200);
  // Inference is its own lane: the key's spent management budget does not refuse it (an unknown deployment is 404).
  const infer = () => api.request('POST', '/v1/inference', { token: key.key, body: { deployment: 'nothing-here', messages: [{ role: 'user', content: 'hi' }] } });
  for (let i = 0; i < 5; i++) t.is((await infer()).status, 404);
  const inferenceLimited = await infer();
  t.is(inferenceLimited.status, 429);
  t.is(inferenceLimited.body.message, 'Rate limit exceeded for inference requests');
  // And a key that spent its inference budget still manages deployments: another key, fresh, shows it.
  const second = await createApiKey(api, a.token, 'full_access');
  for (let i = 0; i < 5; i++) t.is((await api.request('POST', '/v1/inference', { token: second.key, body: { deployment: 'nothing-here', messages: [{ role: 'user', content: 'hi' }] } })).status, 404);
  t.is((await api.request('GET', '/api/deployments', { token: second.key })).status, 200);
});

test('an organization\'s counter allows its credentials together ORGANIZATION_HEADROOM times the plan\'s rate', async (t) => {
  const api = await startTestApi(import.meta.filename, tiny);
  t.teardown(() => api.close());
  const { token } = await signup(api);
  // Five keys made by the session: five management requests of the organization's 25.
  const keys = [];
  for (let i = 0; i < ORGANIZATION_HEADROOM; i++) keys.push(await createApiKey(api, token, 'full_access'));
  // Four keys at their own burst of five: the organization's 25 are spent, and the fifth key, fresh, is refused.
  for (const key of keys.slice(0, 4)) for (let i = 0; i < 5; i++) t.is((await api.request('GET', '/api/deployments', { token: key.key })).status, 200);
  const refused = await api.request('GET', '/api/deployments', { token: keys[4]!.key });
  t.is(refused.status, 429);
  t.is(refused.headers.get('x-ratelimit-limit'), String(TINY.perMinute * ORGANIZATION_HEADROOM));
});

test('calls without a credential are limited per client address', async (t) => {
  const api = await startTestApi(import.meta.filename, tiny);
  t.teardown(() => api.close());
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await api.request('GET', '/v1/onboarding/help?q=deploy')).status);
  t.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
  // Health probes are never limited: a load balancer asks every few seconds from one address.
  t.is((await api.request('GET', '/api/health')).status, 200);
  const limited = await api.request('POST', '/v1/auth/signin', { body: { email: 'a@b.co', password: 'whatever1' } });
  t.is(limited.status, 429);
  t.truthy(limited.headers.get('retry-after'));
});

test('behind a trusted proxy, clients are told apart by X-Forwarded-For', async (t) => {
  const api = await startTestApi(import.meta.filename, { ...tiny, config: { env: 'development', signingKey: 'test-signing-key-0123456789abcdefghijklmnop', endpointDomain: 'x', trustProxy: true, adminEmails: [] } });
  t.teardown(() => api.close());
  const from = (address: string) => api.request('GET', '/v1/onboarding/help?q=deploy', { headers: { 'x-forwarded-for': address } });
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
  // The key's counter allows five.
  t.is(statuses.filter((s) => s === 200).length, 5);
  t.is(statuses.filter((s) => s === 429).length, 7);
});

test('two replicas on one database share one budget', async (t) => {
  const a = await startTestApi(import.meta.filename, tiny);
  t.teardown(() => a.close());
  const b = await startTestApi(import.meta.filename, { ...tiny, databaseUrl: a.databaseUrl });
  t.teardown(() => b.close());
  const { token } = await signup(a);
  const key = await createApiKey(a, token, 'full_access');
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) statuses.push((await (i % 2 ? b : a).request('GET', '/api/deployments', { token: key.key })).status);
  t.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
  const remaining = await b.request('GET', '/v1/gpu-types', { token: key.key });
  t.is(remaining.status, 429);
  t.is(remaining.headers.get('x-ratelimit-remaining'), '0');
});
