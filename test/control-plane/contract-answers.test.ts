// What the OpenAPI document says is what Kiln answers, where they had parted: a body the document requires is
// 400 when left out (and one it marks optional may be); an empty Idempotency-Key is 400 like an over-long one;
// a literal path's Allow lists its own methods only; a DELETE takes its id in the query or in a JSON body; a URL
// over 16 KB is 431 in the surface's error format.
import { createServer, request } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import test from 'ava';
import { answerClientErrors } from '../../control-plane/http/client-error.ts';
import { signupAdmin } from '../support/admin.ts';
import { addMember, createApiKey, signup, startTestApi, startTestGateway, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
let admin: { token: string };
test.before(async () => {
  api = await startTestApi(import.meta.filename);
  admin = await signupAdmin(api);
});
test.after.always(() => api?.close());

const missingBody = { error: 'Bad Request', message: 'Invalid body: required (a JSON object)', code: 'INVALID_REQUEST', statusCode: 400 };

interface Operation { requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> }; responses: Record<string, { content?: unknown }>; parameters?: Array<{ name: string; in: string; required?: boolean }> }
const documentOf = async () => (await api.request('GET', '/v1/openapi')).body as { paths: Record<string, Record<string, Operation>> };

/** Raw HTTP, for what fetch will not send (OPTIONS's answer read whole, a URL over the limit). */
function rawRequest(method: string, path: string, headers: Record<string, string> = {}, base = api.url): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a body the document requires, left out, is 400 naming it in the surface\'s format, on the routes that answered 200', async (t) => {
  const doc = await documentOf();
  const rows: Array<[string, string, string]> = [
    ['POST', '/v1/settings/profile', '/v1/settings/profile'],
    ['POST', '/v1/settings/organization', '/v1/settings/organization'],
    ['PUT', '/v1/alerts/{id}', '/v1/alerts/alr_0123456789abcdefghij'],
    ['PATCH', '/v1/admin/feature-flags/{id}', '/v1/admin/feature-flags/flag_x'],
    ['PATCH', '/v1/admin/clusters/{id}', '/v1/admin/clusters/clu_testdefaultcluster0'],
  ];
  for (const [method, declared, path] of rows) {
    t.true(doc.paths[declared]![method.toLowerCase()]!.requestBody!.required, `${method} ${declared} documents its body as required`);
    const res = await api.request(method, path, { token: admin.token });
    t.is(res.status, 400, `${method} ${path}`);
    t.deepEqual(res.body, missingBody, `${method} ${path}`);
    t.deepEqual((await api.request(method, path, { token: admin.token, body: '', headers: { 'content-type': 'application/json' } })).body, missingBody, `${method} ${path} with an empty body`);
  }
  t.is((await api.request('POST', '/v1/settings/profile', { token: admin.token, body: {} })).status, 200, 'an empty object changes nothing');

  // The platform surface names the missing body in details.fields.
  const platform = await api.request('PATCH', '/api/deployments/dep_0123456789abcdefghij', { token: admin.token });
  t.is(platform.status, 400);
  t.deepEqual(platform.body, { success: false, data: null, error: { code: 'INVALID_REQUEST', message: 'Invalid body: required (a JSON object)', details: { fields: [{ field: 'body', message: 'required' }] } } });
});

test('every route whose document requires a body answers 400 without one; a route whose body only carries options documents it optional', async (t) => {
  const doc = await documentOf();
  for (const route of api.app.routes.filter((r) => r.body)) {
    const operation = doc.paths[route.path]![route.method.toLowerCase()]!;
    t.is(operation.requestBody!.required, !route.optionalBody, `${route.method} ${route.path}: required in the document`);
    if (route.optionalBody) continue;
    const res = await api.request(route.method, route.path.replace(/\{\w+\}/g, 'x0123456789'), { token: admin.token });
    t.is(res.status, 400, `${route.method} ${route.path}: ${JSON.stringify(res.body)}`);
    t.is(res.body?.error?.message ?? res.body?.message, 'Invalid body: required (a JSON object)', `${route.method} ${route.path}`);
  }
});

test('starring a template takes no body: the document says so and Kiln stars it', async (t) => {
  const user = await signup(api, 'star');
  const created = await api.request('POST', '/v1/templates/deploy', {
    token: user.token, body: { name: 'starred one', configuration: { model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4' } },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const doc = await documentOf();
  t.false(doc.paths['/v1/templates/{id}/star']!.post!.requestBody!.required);
  const starred = await api.request('POST', `/v1/templates/${created.body.id}/star`, { token: user.token });
  t.is(starred.status, 200, JSON.stringify(starred.body));
  t.like(starred.body, { starred: true });
  t.is((await api.request('POST', `/v1/templates/${created.body.id}/star`, { token: user.token, body: {} })).status, 200, 'and with {}');
});

test('an empty Idempotency-Key is 400 naming the header, as an over-long one is', async (t) => {
  const user = await signup(api, 'idem');
  for (const value of ['', '   ', 'x'.repeat(256)]) {
    const reference = await api.request('POST', '/v1/settings/api-keys', { token: user.token, body: { name: 'k', scope: 'read_only' }, headers: { 'Idempotency-Key': value } });
    t.is(reference.status, 400, `'${value.slice(0, 8)}'`);
    t.deepEqual(reference.body, { error: 'Bad Request', message: 'Invalid header Idempotency-Key: 1 to 255 visible ASCII characters', code: 'INVALID_REQUEST', statusCode: 400 });
    const platform = await api.request('POST', '/api/deployments', { token: user.token, body: { name: 'idem', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' }, headers: { 'Idempotency-Key': value } });
    t.is(platform.status, 400);
    t.deepEqual(platform.body.error, { code: 'INVALID_REQUEST', message: 'Invalid header Idempotency-Key: 1 to 255 visible ASCII characters', details: { header: 'Idempotency-Key' } });
  }
  // Nothing was created by the refused requests; without the header the request goes through.
  t.deepEqual((await api.request('GET', `/v1/settings/api-keys?orgId=${user.organizationId}`, { token: user.token })).body, []);
  t.is((await api.request('POST', '/v1/settings/api-keys', { token: user.token, body: { name: 'k', scope: 'read_only' } })).status, 201);
});

test('a literal path\'s Allow lists the methods of its own routes, not those of a parameter route beside it', async (t) => {
  const user = await signup(api, 'allow');
  const methods = new Map<string, Set<string>>();
  for (const route of api.app.routes) {
    for (const path of route.path.startsWith('/api/') ? [route.path, route.path.replace(/^\/api\//, '/api/v1/')] : [route.path]) {
      const set = methods.get(path) ?? new Set<string>();
      set.add(route.method);
      if (route.method === 'GET') set.add('HEAD');
      methods.set(path, set);
    }
  }
  const allowOf = (res: { headers: Record<string, string | string[] | undefined> }) => String(res.headers.allow).split(', ').sort();
  for (const [path, expected] of methods) {
    if (path.includes('{')) continue;
    const res = await rawRequest('OPTIONS', path, { authorization: `Bearer ${user.token}` });
    t.is(res.status, 200, `OPTIONS ${path}`);
    t.deepEqual(allowOf(res), [...expected].sort(), `OPTIONS ${path}`);
  }
  // The ones the issue found, and a method only the parameter route has: 405 with the literal path's Allow.
  t.deepEqual(allowOf(await rawRequest('OPTIONS', '/v1/templates/deploy')), ['GET', 'HEAD', 'POST']);
  t.deepEqual(allowOf(await rawRequest('OPTIONS', '/v1/secrets/test')), ['POST']);
  t.deepEqual(allowOf(await rawRequest('OPTIONS', '/v1/notifications/template-updates')), ['GET', 'HEAD', 'PATCH']);
  const deleted = await api.request('DELETE', '/v1/templates/deploy', { token: user.token });
  t.is(deleted.status, 405);
  t.deepEqual(allowOf({ headers: { allow: deleted.headers.get('allow') ?? '' } }), ['GET', 'HEAD', 'POST']);
  t.deepEqual(deleted.body, { error: 'Method Not Allowed', message: 'Method not allowed', code: 'METHOD_NOT_ALLOWED', statusCode: 405 });
  // The parameter route keeps its own.
  t.true(allowOf(await rawRequest('OPTIONS', '/v1/templates/tpl_0123456789abcdefghij')).includes('DELETE'));
});

test('DELETE /v1/settings/api-keys, /v1/monitoring/webhooks and /v1/enterprise/assignments take the id in a JSON body as well as in the query', async (t) => {
  const owner = await signup(api, 'deletes');
  const token = owner.token;
  const doc = await documentOf();
  for (const [path, field] of [['/v1/settings/api-keys', 'id'], ['/v1/monitoring/webhooks', 'id'], ['/v1/enterprise/assignments', 'userId']] as const) {
    const op = doc.paths[path]!.delete!;
    t.false(op.requestBody!.required, `${path}: the body is optional`);
    t.truthy((op.requestBody!.content['application/json']!.schema as { properties?: Record<string, unknown> }).properties?.[field] ?? op.requestBody!.content['application/json']!.schema, path);
    const inQuery = op.parameters?.find((p) => p.name === field && p.in === 'query');
    t.truthy(inQuery, `${path}: ?${field}= stays`);
    t.false(inQuery?.required ?? false, `${path}: ?${field}= is optional`);
    const neither = await api.request('DELETE', path, { token });
    t.is(neither.status, 400, `${path} with neither`);
    t.is(neither.body.message, `Invalid query parameter ${field}: required (in the query or the JSON body)`);
    const differing = await api.request('DELETE', `${path}?${field}=a1`, { token, body: { [field]: 'b2' } });
    t.is(differing.status, 400, `${path} with two values`);
  }

  const inBody = await createApiKey(api, token, 'read_only');
  const revoked = await api.request('DELETE', '/v1/settings/api-keys', { token, body: { id: inBody.id } });
  t.is(revoked.status, 200, JSON.stringify(revoked.body));
  t.like(revoked.body, { id: inBody.id });
  const inQuery = await createApiKey(api, token, 'read_only');
  t.is((await api.request('DELETE', `/v1/settings/api-keys?id=${inQuery.id}`, { token })).status, 200);
  const inBoth = await createApiKey(api, token, 'read_only');
  t.is((await api.request('DELETE', `/v1/settings/api-keys?id=${inBoth.id}`, { token, body: { id: inBoth.id } })).status, 200);
  t.is((await api.request('DELETE', '/v1/settings/api-keys', { token, body: { id: inBody.id } })).status, 404, 'revoked already');

  const channel = await api.request('POST', '/v1/monitoring/webhooks', { token, body: { url: 'https://hooks.example.com/alerts' } });
  t.is(channel.status, 201);
  t.is((await api.request('DELETE', '/v1/monitoring/webhooks', { token, body: { id: channel.body.id } })).status, 200);
  t.deepEqual((await api.request('GET', `/v1/monitoring/webhooks?orgId=${owner.organizationId}`, { token })).body, []);

  const member = await addMember(api, owner.organizationId, 'viewer');
  const removed = await api.request('DELETE', '/v1/enterprise/assignments', { token, body: { userId: member.userId } });
  t.is(removed.status, 200, JSON.stringify(removed.body));
  t.false((await api.request('GET', '/v1/enterprise/assignments', { token })).body.some((a: { userId: string }) => a.userId === member.userId));
});

test('a URL over 16 KB is 431 in the surface\'s error format, as the document says', async (t) => {
  const long = 'x'.repeat(17 * 1024);
  const reference = await rawRequest('GET', `/v1/deployments?orgId=${long}`);
  t.is(reference.status, 431);
  t.regex(String(reference.headers['content-type']), /^application\/json/);
  t.deepEqual(JSON.parse(reference.text), { error: 'Request Header Fields Too Large', message: 'The request line and headers exceed 16 KB', code: 'REQUEST_HEADERS_TOO_LARGE', statusCode: 431 });
  const platform = await rawRequest('GET', `/api/deployments?cursor=${long}`);
  t.is(platform.status, 431);
  t.deepEqual(JSON.parse(platform.text), { success: false, data: null, error: { code: 'REQUEST_HEADERS_TOO_LARGE', message: 'The request line and headers exceed 16 KB', details: {} } });
  // Headers over the limit too, whatever the URL.
  const headers = await rawRequest('GET', '/v1/health', { 'x-filler': long });
  t.is(headers.status, 431);
  t.like(JSON.parse(headers.text), { code: 'REQUEST_HEADERS_TOO_LARGE', statusCode: 431 });
  // The server still answers afterwards.
  t.is((await api.request('GET', '/v1/health')).status, 200);

  const doc = await documentOf();
  t.deepEqual(Object.keys(doc.paths['/v1/deployments']!.get!.responses['431']!.content as object), ['application/json']);

  // The inference gateway's server answers the same way.
  const gateway = await startTestGateway(api);
  t.teardown(() => gateway.close());
  const relayed = await rawRequest('POST', `/v1/inference?${long}`, {}, gateway.url);
  t.is(relayed.status, 431);
  t.deepEqual(JSON.parse(relayed.text), { error: 'Request Header Fields Too Large', message: 'The request line and headers exceed 16 KB', code: 'REQUEST_HEADERS_TOO_LARGE', statusCode: 431 });
});

/** What a server with Kiln's client-error answer writes back to `sent`, read until it closes. */
async function answerTo(sent: string, options: { headersTimeout?: number } = {}): Promise<string> {
  const server = createServer({ connectionsCheckingInterval: 50, headersTimeout: options.headersTimeout ?? 60_000, requestTimeout: 0 }, (_req, res) => res.end());
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<string>((resolve, reject) => {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1', () => socket.write(sent));
      let text = '';
      socket.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      socket.on('end', () => { resolve(text); socket.destroy(); });
      socket.on('error', reject);
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test('the server\'s other refusals keep Node\'s status with a body in the surface\'s format: malformed 400, headers too slow 408', async (t) => {
  const malformed = await answerTo('GET /api/deployments HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n');
  t.regex(malformed, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.deepEqual(JSON.parse(malformed.slice(malformed.indexOf('\r\n\r\n') + 4)), { success: false, data: null, error: { code: 'INVALID_REQUEST', message: 'The request is not valid HTTP', details: {} } });
  const slow = await answerTo('GET /v1/health HTTP/1.1\r\nHost: a\r\n', { headersTimeout: 200 });
  t.regex(slow, /^HTTP\/1\.1 408 Request Timeout\r\n/);
  t.deepEqual(JSON.parse(slow.slice(slow.indexOf('\r\n\r\n') + 4)), { error: 'Request Timeout', message: 'The request did not arrive in time', code: 'REQUEST_TIMEOUT', statusCode: 408 });
});
