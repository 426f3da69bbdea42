// Cross-cutting HTTP behaviour: both error formats for every kind of failure, request ids, health.
import { request } from 'node:http';
import test from 'ava';
import { eventually } from '../support/eventually.ts';
import { signup, startTestApi, type TestApi, validDeployment } from '../support/control-plane.ts';

let api: TestApi;
let token: string;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
  ({ token } = await signup(api));
});
test.after.always(() => api?.close());

test('an unknown route is 404 in the reference format under /v1 and elsewhere', async (t) => {
  for (const path of ['/v1/nothing-here', '/v2/deployments', '/']) {
    const res = await api.request('GET', path);
    t.is(res.status, 404, path);
    t.deepEqual(Object.keys(res.body).sort(), ['code', 'error', 'message', 'statusCode']);
    t.like(res.body, { error: 'Not Found', code: 'NOT_FOUND', statusCode: 404 });
  }
});

test('an unknown route is 404 in the platform envelope under /api, including unknown versions', async (t) => {
  for (const path of ['/api/nothing-here', '/api/v2/deployments']) {
    const res = await api.request('GET', path);
    t.is(res.status, 404, path);
    t.deepEqual(res.body, { success: false, data: null, error: { code: 'NOT_FOUND', message: 'Not found', details: {} } });
  }
});

test('a wrong method is 405 with Allow, in each surface\'s format', async (t) => {
  const reference = await api.request('DELETE', '/v1/deployments', { token });
  t.is(reference.status, 405);
  t.is(reference.headers.get('allow'), 'HEAD, GET, POST');
  t.like(reference.body, { code: 'METHOD_NOT_ALLOWED', statusCode: 405, error: 'Method Not Allowed' });

  const platform = await api.request('POST', '/api/deployments/dep_x', { token, body: {} });
  t.is(platform.status, 405);
  t.is(platform.headers.get('allow'), 'HEAD, GET, PATCH, PUT, DELETE');
  t.like(platform.body, { success: false, data: null, error: { code: 'METHOD_NOT_ALLOWED' } });
});

/** fetch refuses TRACE and TRACK itself: these requests go through node:http. */
function rawRequest(method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; allow: string | undefined; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(`${api.url}${path}`, { method, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('any method a path lacks is 405 with Allow, whatever the method and credential, in each surface\'s format', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['TRACE', '/api/auth/login', 'POST'],
    ['DELETE', '/api/auth/login', 'POST'],
    ['PROPFIND', '/api/v1/auth/login', 'POST'],
    ['TRACE', '/v1/health', 'HEAD, GET'],
    ['PATCH', '/v1/health', 'HEAD, GET'],
    ['LOCK', '/v1/deployments', 'HEAD, GET, POST'],
  ];
  for (const [method, path, allow] of cases) {
    const credentials: Array<Record<string, string>> = [{}, { authorization: `Bearer ${token}` }, { authorization: 'Bearer sk_test_nonsense' }];
    for (const headers of credentials) {
      const res = await rawRequest(method, path, headers);
      const label = `${method} ${path} ${Object.keys(headers).join()}`;
      t.is(res.status, 405, label);
      t.is(res.allow, allow, label);
      if (path.startsWith('/api/')) t.deepEqual(res.body, { success: false, data: null, error: { code: 'METHOD_NOT_ALLOWED', message: 'Method not allowed', details: {} } }, label);
      else t.deepEqual(res.body, { error: 'Method Not Allowed', message: 'Method not allowed', code: 'METHOD_NOT_ALLOWED', statusCode: 405 }, label);
    }
  }
});

test('a method on a path Kiln does not serve is 404, never 501', async (t) => {
  for (const [method, path] of [['TRACE', '/api/nothing-here'], ['PROPFIND', '/v1/nothing-here'], ['TRACE', '/']]) {
    const res = await rawRequest(method!, path!);
    t.is(res.status, 404, `${method} ${path}`);
    t.like(res.body, path!.startsWith('/api/') ? { success: false, error: { code: 'NOT_FOUND' } } : { code: 'NOT_FOUND', statusCode: 404 });
  }
});

test('OPTIONS lists a path\'s methods', async (t) => {
  const res = await rawRequest('OPTIONS', '/api/auth/login');
  t.is(res.status, 200);
  t.is(res.allow, 'POST');
});

test('malformed JSON is 400 in each format', async (t) => {
  const platform = await api.request('POST', '/api/deployments', { token, body: '{"name": ' });
  t.is(platform.status, 400);
  t.like(platform.body, { success: false, error: { code: 'INVALID_JSON' } });
  const reference = await api.request('POST', '/v1/deployments', { token, body: '[1,' });
  t.is(reference.status, 400);
  t.like(reference.body, { code: 'INVALID_JSON', statusCode: 400, error: 'Bad Request' });
});

test('a body that is not JSON is 415', async (t) => {
  const res = await api.request('POST', '/api/deployments', { token, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.is(res.status, 415);
  t.like(res.body, { success: false, error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
  const reference = await api.request('POST', '/v1/auth/signin', { body: 'hello', headers: { 'content-type': 'text/plain' } });
  t.is(reference.status, 415);
  t.like(reference.body, { code: 'UNSUPPORTED_MEDIA_TYPE', statusCode: 415 });
  // Streamed in chunks, without a Content-Length.
  const chunked = await fetch(`${api.url}/api/deployments`, {
    method: 'POST', duplex: 'half', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
    body: new ReadableStream({ start(controller) { controller.enqueue(new TextEncoder().encode('hello')); controller.close(); } }),
  } as RequestInit);
  t.is(chunked.status, 415);
  t.like(await chunked.json(), { success: false, error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
});

test('an oversized body is 413', async (t) => {
  const res = await api.request('POST', '/api/deployments', { token, body: { ...validDeployment(), model: 'x'.repeat(2 * 1024 * 1024) } });
  t.is(res.status, 413);
  t.like(res.body, { success: false, error: { code: 'PAYLOAD_TOO_LARGE' } });
});

test('a JSON body of the wrong shape is 400, never 500', async (t) => {
  for (const body of ['null', '"text"', '[]', '42', '{"name": {"$gt": ""}}']) {
    const res = await api.request('POST', '/api/deployments', { token, body });
    t.is(res.status, 400, body);
    t.false(res.body.success);
  }
});

test('every answer carries a request id, and a sane given one is echoed', async (t) => {
  const generated = await api.request('GET', '/v1/health');
  t.regex(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const given = await api.request('GET', '/nope', { headers: { 'x-request-id': 'trace-123' } });
  t.is(given.headers.get('x-request-id'), 'trace-123');
  const insane = await api.request('GET', '/v1/health', { headers: { 'x-request-id': 'a b<c>' } });
  t.not(insane.headers.get('x-request-id'), 'a b<c>');
});

test('health answers on both surfaces with the database check', async (t) => {
  const reference = await api.request('GET', '/v1/health');
  t.is(reference.status, 200);
  t.deepEqual(reference.body, { status: 'ok', checks: { database: 'ok' } });
  for (const path of ['/api/health', '/api/v1/health']) {
    const platform = await api.request('GET', path);
    t.deepEqual(platform.body, { success: true, data: { status: 'ok', checks: { database: 'ok' } }, error: null });
  }
});

test('health is 503 once the database is unreachable (as soon as the background probe sees it)', async (t) => {
  const down = await startTestApi(import.meta.filename);
  // Take the database away underneath the running app.
  const name = down.orm.config.get('dbName');
  await api.pool.query(`DROP DATABASE "${name}" WITH (FORCE)`);
  // Health reads the last probe (every 250 ms; one silent for 1.5 s fails): never the database itself.
  const res = await eventually('health 503', async () => {
    const answer = await down.request('GET', '/api/health');
    return answer.status === 503 ? answer : undefined;
  }, 5_000);
  t.is(res.status, 503);
  t.like(res.body, { success: false, error: { code: 'SERVICE_UNAVAILABLE' } });
  const reference = await down.request('GET', '/v1/health');
  t.like(reference.body, { statusCode: 503, code: 'SERVICE_UNAVAILABLE', error: 'Service Unavailable' });
  await down.close().catch(() => {});
});
