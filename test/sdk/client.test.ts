// The SDK's client rules, as a program using it sees them: retries of 429/5xx with the spec's backoff or the
// server's Retry-After, a retried creation made once (against a real Kiln behind a flaky proxy), never a
// retry of 400/401/403/404, and Kiln's error code on the thrown error.
import test from 'ava';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BACKOFF_SECONDS, createKilnClient, KilnError, ok } from '../../client/sdk/client.ts';
import { signup, startTestApi, validDeployment, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
/** A creation body as the typed client takes it (its enums literal). */
const deployment = (name?: string) => ({ ...validDeployment(name), runtime: 'vllm' as const, gpu: 'nvidia-l4' as const });
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

test('a creation answered 503 with Retry-After is retried once with the same Idempotency-Key, and Kiln creates one deployment', async (t) => {
  const user = await signup(api);
  const keys: string[] = [];
  // A proxy in front of the real API: the first creation reaches Kiln (it is made) but its answer is lost
  // and replaced by a 503 with Retry-After, as a failing load balancer would.
  const proxy = await listen(async (req, res) => {
    const body = await readBody(req);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name))) as Record<string, string>;
    const upstream = await fetch(api.url + req.url, { method: req.method, headers, body: body.length ? body : undefined });
    const text = await upstream.text();
    if (req.method === 'POST') keys.push(String(req.headers['idempotency-key']));
    if (req.method === 'POST' && keys.length === 1) {
      res.writeHead(503, { 'Retry-After': '3', 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Service Unavailable', message: 'busy', code: 'SERVICE_UNAVAILABLE', statusCode: 503 }));
      return;
    }
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(text);
  });
  t.teardown(() => proxy.server.close());
  const waits: number[] = [];
  const kiln = createKilnClient({ baseUrl: proxy.url, token: user.token, sleep: async (ms) => { waits.push(ms); } });

  const created = await ok(kiln.POST('/v1/deployments', { body: deployment('retried') }));

  t.is(created.name, 'retried');
  t.deepEqual(waits, [3000], 'waited as Retry-After said, once');
  t.is(keys.length, 2);
  t.is(keys[0], keys[1], 'the retry carried the same Idempotency-Key');
  t.regex(keys[0]!, /^[0-9a-f-]{36}$/);
  const listed = await ok(createKilnClient({ baseUrl: api.url, token: user.token }).GET('/v1/deployments', { params: { query: { orgId: user.organizationId } } }));
  t.deepEqual(listed.data.map((d) => d.id), [created.id], 'one deployment, not two');
});

test('without Retry-After the waits are 1, 2, 4, 8 and 16 seconds, then the last answer is thrown with its code', async (t) => {
  let calls = 0;
  const server = await listen((_req, res) => {
    calls += 1;
    res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Bad Gateway', message: 'upstream down', code: 'BAD_GATEWAY', statusCode: 502 }));
  });
  t.teardown(() => server.server.close());
  const waits: number[] = [];
  const kiln = createKilnClient({ baseUrl: server.url, token: 'sk_test_x', sleep: async (ms) => { waits.push(ms); } });
  const error = await t.throwsAsync(kiln.GET('/v1/deployments', { params: { query: { orgId: 'org_x' } } }), { instanceOf: KilnError });
  t.deepEqual(waits, BACKOFF_SECONDS.map((s) => s * 1000));
  t.deepEqual(waits, [1000, 2000, 4000, 8000, 16000]);
  t.is(calls, 6);
  t.is(error.statusCode, 502);
  t.is(error.code, 'BAD_GATEWAY');
});

test('a client with a longest wait retries a short Retry-After and hands a longer one straight back', async (t) => {
  const retryAfter = ['2', '30'];
  let calls = 0;
  const server = await listen((_req, res) => {
    calls += 1;
    res.writeHead(429, { 'content-type': 'application/json', 'Retry-After': retryAfter.shift() ?? '30' })
      .end(JSON.stringify({ error: 'Too Many Requests', message: 'slow down', code: 'RATE_LIMIT_EXCEEDED', statusCode: 429, details: { retry_after: 30 } }));
  });
  t.teardown(() => server.server.close());
  const waits: number[] = [];
  const kiln = createKilnClient({ baseUrl: server.url, token: 'sk_test_x', longestWaitSeconds: 4, sleep: async (ms) => { waits.push(ms); } });
  const error = await t.throwsAsync(kiln.GET('/v1/deployments', { params: { query: { orgId: 'org_x' } } }), { instanceOf: KilnError });
  t.deepEqual(waits, [2000], 'waited the 2 s asked, not the 30 s');
  t.is(calls, 2);
  t.is(error.code, 'RATE_LIMIT_EXCEEDED');
  t.is(error.retryAfterSeconds, 30, 'the wait asked is on the error, for the caller to show');
});

for (const status of [400, 401, 403, 404]) {
  test(`${status} is never retried`, async (t) => {
    let calls = 0;
    const server = await listen((_req, res) => {
      calls += 1;
      res.writeHead(status, { 'content-type': 'application/json', 'Retry-After': '1' }).end(JSON.stringify({ error: 'x', message: `refused ${status}`, code: `CODE_${status}`, statusCode: status }));
    });
    t.teardown(() => server.server.close());
    const waits: number[] = [];
    const kiln = createKilnClient({ baseUrl: server.url, token: 'sk_test_x', sleep: async (ms) => { waits.push(ms); } });
    const error = await t.throwsAsync(kiln.POST('/v1/deployments', { body: deployment() }), { instanceOf: KilnError });
    t.is(calls, 1);
    t.deepEqual(waits, []);
    t.is(error.code, `CODE_${status}`);
    t.is(error.message, `refused ${status}`);
  });
}

test('errors of both surfaces carry Kiln\'s code: /v1 and /api', async (t) => {
  const kiln = createKilnClient({ baseUrl: api.url, token: 'sk_test_not_a_real_key_000000000000' });
  const reference = await t.throwsAsync(kiln.GET('/v1/deployments', { params: { query: { orgId: 'org_x' } } }), { instanceOf: KilnError });
  t.is(reference.statusCode, 401);
  t.truthy(reference.code);
  const user = await signup(api);
  const platform = await t.throwsAsync(createKilnClient({ baseUrl: api.url, token: user.token }).GET('/api/deployments/{id}', { params: { path: { id: 'dep_unknown' } } }), { instanceOf: KilnError });
  t.is(platform.statusCode, 404);
  t.is(platform.code, 'DEPLOYMENT_NOT_FOUND');
});
