// GET /metrics/internal: Kiln's own metrics in Prometheus text for a scraper holding KILN_METRICS_TOKEN. Requests
// are counted by route template (never the URL's ids) and status; the credential cache's hits and misses are
// counted; neither a missing or wrong token nor a user's own credential gets in, and an API without a token
// answers 503 to a caller sending one (401 without). Served at /metrics/internal and, the reference row, /v1/metrics/internal.
import test from 'ava';
import { createApiKey, signup, startTestApi, type TestApi } from '../support/control-plane.ts';

const TOKEN = 'metrics-token-for-tests-0123456789abcdef';

// The counting tests run alone (serial), so no other test's requests move their counts.
let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename, { config: { metricsToken: TOKEN } });
});
test.after.always(() => api?.close());

const scrape = async () => {
  const res = await api.request('GET', '/metrics/internal', { token: TOKEN });
  if (res.status !== 200) throw new Error(`scrape failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as string;
};

/** A sample's value in Prometheus text, 0 when absent; labels given in the order prom-client writes them. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const rendered = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',');
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${rendered}} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

const requests = (text: string, method: string, route: string, status: number) => sample(text, 'kiln_http_requests_total', { method, route, status: String(status) });

test.serial('requests are counted and timed by route template and status; ids never become labels', async (t) => {
  const user = await signup(api, 'metrics');
  const before = await scrape();
  for (const id of ['dep_unknownaaaaaaaaaaaaa', 'dep_unknownbbbbbbbbbbbbb', 'dep_unknownccccccccccccc']) {
    t.is((await api.request('GET', `/api/deployments/${id}`, { token: user.token })).status, 404);
  }
  t.is((await api.request('GET', '/api/deployments', { token: user.token })).status, 200);
  t.is((await api.request('GET', '/api/deployments', { token: user.token })).status, 200);
  t.is((await api.request('GET', '/v1/deployments', {})).status, 401);
  t.is((await api.request('GET', '/no/such/path/12345', {})).status, 404);
  t.is((await api.request('DELETE', '/v1/health', {})).status, 405);

  const after = await scrape();
  t.is(requests(after, 'GET', '/api/deployments/{id}', 404) - requests(before, 'GET', '/api/deployments/{id}', 404), 3);
  t.is(requests(after, 'GET', '/api/deployments', 200) - requests(before, 'GET', '/api/deployments', 200), 2);
  t.is(requests(after, 'GET', '/v1/deployments', 401) - requests(before, 'GET', '/v1/deployments', 401), 1);
  t.is(requests(after, 'GET', 'unmatched', 404) - requests(before, 'GET', 'unmatched', 404), 1);
  // A path that exists answering a method it lacks is named by its template.
  t.is(requests(after, 'DELETE', '/v1/health', 405) - requests(before, 'DELETE', '/v1/health', 405), 1);
  t.false(after.includes('dep_unknown'), 'no id reaches a label');
  t.false(after.includes('/no/such/path'), 'no unknown URL reaches a label');

  const histogram = { method: 'GET', route: '/api/deployments/{id}', status: '404' };
  t.is(sample(after, 'kiln_http_request_duration_seconds_count', histogram) - sample(before, 'kiln_http_request_duration_seconds_count', histogram), 3);
  t.true(sample(after, 'kiln_http_request_duration_seconds_sum', histogram) > sample(before, 'kiln_http_request_duration_seconds_sum', histogram));
  // The scrape before counts too, once answered.
  t.true(requests(after, 'GET', '/metrics/internal', 200) >= 1);
  // prom-client's process metrics are there.
  t.regex(after, /^process_cpu_user_seconds_total \d/m);
  t.regex(after, /^nodejs_eventloop_lag_seconds \d/m);
});

test.serial('the credential cache counts its hits and misses', async (t) => {
  const user = await signup(api, 'cache');
  const key = await createApiKey(api, user.token, 'read_only');
  const before = await scrape();
  for (let i = 0; i < 3; i++) t.is((await api.request('GET', '/api/deployments', { token: key.key })).status, 200);
  const after = await scrape();
  const count = (text: string, result: string) => sample(text, 'kiln_credential_cache_requests_total', { result });
  // The key's first use loads it; the next two are answered from the cache (entries live 5 s).
  t.is(count(after, 'miss') - count(before, 'miss'), 1);
  t.is(count(after, 'hit') - count(before, 'hit'), 2);
});

test('the answer is Prometheus text 0.0.4', async (t) => {
  const res = await api.request('GET', '/metrics/internal', { token: TOKEN });
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  t.regex(res.body as string, /^# HELP kiln_http_requests_total /m);
  t.regex(res.body as string, /^# TYPE kiln_http_request_duration_seconds histogram$/m);
});

test('no token, a wrong one, or a user\'s own credential is 401 in the reference format', async (t) => {
  const user = await signup(api, 'scraper');
  const key = await createApiKey(api, user.token, 'full_access');
  const attempts: Record<string, Record<string, string>> = {
    'no token': {},
    'a wrong token': { authorization: `Bearer ${TOKEN.slice(0, -1)}x` },
    'a longer token': { authorization: `Bearer ${TOKEN}0` },
    'the token without Bearer': { authorization: TOKEN },
    'a user\'s access token': { authorization: `Bearer ${user.token}` },
    'a user\'s full access API key': { authorization: `Bearer ${key.key}` },
  };
  for (const [label, headers] of Object.entries(attempts)) {
    const res = await api.request('GET', '/metrics/internal', { headers });
    t.is(res.status, 401, label);
    t.deepEqual(res.body, { error: 'Unauthorized', message: 'Invalid metrics token', code: 'INVALID_API_KEY', statusCode: 401 }, label);
  }
});

test('an API without KILN_METRICS_TOKEN answers 401 to no credential, and 503 to a caller sending one', async (t) => {
  const off = await startTestApi(import.meta.filename, { databaseUrl: api.databaseUrl });
  t.teardown(() => off.close());
  for (const path of ['/metrics/internal', '/v1/metrics/internal']) {
    const missing = await off.request('GET', path);
    t.is(missing.status, 401, path);
    t.deepEqual(missing.body, { error: 'Unauthorized', message: 'Invalid metrics token', code: 'INVALID_API_KEY', statusCode: 401 }, path);
    const res = await off.request('GET', path, { token: TOKEN });
    t.is(res.status, 503, path);
    t.like(res.body, { code: 'SERVICE_UNAVAILABLE', statusCode: 503, message: 'Kiln\'s internal metrics are off: KILN_METRICS_TOKEN is not set' });
  }
});

test('the reference row\'s GET {base_url}/metrics/internal is served under /v1 as well, with the same token', async (t) => {
  const res = await api.request('GET', '/v1/metrics/internal', { token: TOKEN });
  t.is(res.status, 200);
  t.regex(res.body as string, /^# HELP kiln_http_requests_total /m);
  t.is((await api.request('GET', '/v1/metrics/internal', { token: `${TOKEN}0` })).status, 401);
  const doc = (await api.request('GET', '/v1/openapi')).body;
  t.deepEqual(doc.paths['/v1/metrics/internal'].get.security, [{ metricsToken: [] }]);
});

test('a scraper holding the token is not rate limited; a caller with a wrong one is', async (t) => {
  // One request a minute without a credential (two with the burst), as seen from one address; on a database
  // of its own, whose counters no other test moves.
  const tight = { perMinute: 1, burst: 2 };
  const limited = await startTestApi(import.meta.filename, { config: { metricsToken: TOKEN }, rateLimits: { free: tight, startup: tight, growth: tight, enterprise: tight } });
  t.teardown(() => limited.close());
  for (let i = 0; i < 5; i++) t.is((await limited.request('GET', '/metrics/internal', { token: TOKEN })).status, 200, `scrape ${i + 1}`);
  const guesses = [];
  for (let i = 0; i < 4; i++) guesses.push((await limited.request('GET', '/metrics/internal', { token: `${TOKEN}${i}` })).status);
  t.deepEqual(guesses, [401, 401, 429, 429]);
});

test('the OpenAPI document shows the route behind its own token, answering text', async (t) => {
  const doc = (await api.request('GET', '/v1/openapi')).body;
  const op = doc.paths['/metrics/internal'].get;
  t.deepEqual(op.security, [{ metricsToken: [] }]);
  t.like(doc.components.securitySchemes.metricsToken, { type: 'http', scheme: 'bearer' });
  t.deepEqual(Object.keys(op.responses['200'].content), ['text/plain; version=0.0.4; charset=utf-8']);
  t.truthy(op.responses['401']);
  t.truthy(op.responses['503']);
  t.regex(op.summary, /no credential is 401; a credential while the token is not set is 503/);
  t.is(op.responses['403'], undefined);
});
