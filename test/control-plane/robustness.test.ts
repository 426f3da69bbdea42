// Odd input from the wild: none of it may produce a 500.
import { request } from 'node:http';
import test from 'ava';
import { signup, startTestApi, type TestApi, validDeployment } from '../support/control-plane.ts';

let api: TestApi;
let token: string;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
  ({ token } = await signup(api));
});
test.after.always(() => api?.close());

test('odd paths, queries, headers and bodies answer 4xx, never 5xx', async (t) => {
  const probes: Array<[string, string, { body?: unknown; headers?: Record<string, string>; token?: string }]> = [
    ['GET', '/api/deployments/%E0%A4%A', { token }],
    ['GET', '/api/deployments/%00', { token }],
    ['GET', `/api/deployments/${'x'.repeat(5000)}`, { token }],
    ['GET', '/api/deployments?limit[]=1', { token }],
    ['GET', '/api/deployments?status[x]=running', { token }],
    ['GET', '/api/deployments?created_after=2026-02-30', { token }],
    ['GET', '/api/deployments?cursor=%FF', { token }],
    ['GET', '/api/deployments', { headers: { authorization: `Bearer ${'a'.repeat(3000)}` } }],
    ['GET', '/api/deployments', { headers: { authorization: 'Bearer sk_test_' } }],
    ['GET', '/api/deployments', { token, headers: { 'x-organization-id': `org_${'z'.repeat(300)}` } }],
    ['GET', '/v1/deployments?orgId=', { token }],
    ['GET', '/v1/deployments?orgId=%00', { token }],
    ['GET', '/v1/deployments?orgId=org_a&orgId=org_b', { token }],
    ['POST', '/api/deployments', { token, body: '{"__proto__": {"admin": true}, "name": "x"}' }],
    ['POST', '/api/deployments', { token, body: { ...validDeployment(), name: 'ü' } }],
    ['POST', '/api/deployments', { token, body: { ...validDeployment(), replicas: 1e308 } }],
    ['POST', '/api/deployments', { token, body: { ...validDeployment(), model: `a/${'b'.repeat(600)}` } }],
    ['POST', '/api/deployments', { token, body: validDeployment(), headers: { 'idempotency-key': 'k'.repeat(300) } }],
    ['POST', '/api/deployments', { token, body: validDeployment(), headers: { 'content-type': 'application/json; charset=latin1' } }],
    ['POST', '/api/auth/refresh', { body: { refresh_token: 42 } }],
    ['POST', '/api/deployments', { token, body: `${'['.repeat(200_000)}${']'.repeat(200_000)}` }],
    ['POST', '/api/deployments', { token, body: `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}` }],
    ['POST', '/v1/auth/signin', { body: { email: 'x'.repeat(300), password: 'y' } }],
    ['PATCH', '/v1/settings/api-keys', { token, body: { id: 'key_\u0000' } }],
    ['OPTIONS', '/api/deployments', {}],
    ['PROPFIND', '/api/deployments', {}],
  ];
  for (const [method, path, options] of probes) {
    const res = await api.request(method, path, options).catch((error: Error) => ({ status: -1, body: error.message }));
    t.true(res.status < 500, `${method} ${path.slice(0, 60)} ${JSON.stringify(options).slice(0, 80)} -> ${res.status} ${JSON.stringify(res.body)}`);
  }
});

test('a Host header that is no host is 400, not a broken SSO redirect URI', async (t) => {
  const owner = await signup(api, 'hosted');
  const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const url = new URL(`${api.url}/v1/enterprise/sso/providers?orgId=${owner.organizationId}`);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers: { host: 'a b', authorization: `Bearer ${owner.token}` } }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
  t.is(answer.status, 400);
  t.like(JSON.parse(answer.body), { code: 'INVALID_REQUEST', message: 'Invalid header Host' });
});
