// The dashboard served by the API: its files, the single-page app's fallback for pages, and the API's own
// paths left alone (their 404 stays JSON).
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
const INDEX = '<!doctype html><title>Kiln</title><div id="root"></div>';
const SCRIPT = 'console.log("dashboard")';
test.before(async () => {
  // A stand-in build: what matters here is how the API serves a dist folder, not what vite puts in it.
  const dist = await mkdtemp(join(tmpdir(), 'kiln-web-dist-'));
  await mkdir(join(dist, 'assets'));
  await writeFile(join(dist, 'index.html'), INDEX);
  await writeFile(join(dist, 'assets', 'index-Ab12Cd34.js'), SCRIPT);
  await writeFile(join(dist, 'robots.txt'), 'User-agent: *\n');
  api = await startTestApi(import.meta.filename, { config: { webDist: dist } });
});
test.after.always(() => api?.close());

const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

test('/ is the dashboard, never cached so a new build shows at once', async (t) => {
  const res = await api.request('GET', '/', { headers: html });
  t.is(res.status, 200);
  t.is(res.body, INDEX);
  t.regex(res.headers.get('content-type') ?? '', /^text\/html/);
  t.is(res.headers.get('cache-control'), 'no-cache');
  // Only Kiln's own scripts run there, and no other site frames it.
  const policy = res.headers.get('content-security-policy') ?? '';
  t.regex(policy, /script-src 'self'(;|$)/);
  t.regex(policy, /frame-ancestors 'none'/);
});

test('hashed assets are cached for good, with their type', async (t) => {
  const res = await api.request('GET', '/assets/index-Ab12Cd34.js');
  t.is(res.status, 200);
  t.is(res.body, SCRIPT);
  t.regex(res.headers.get('content-type') ?? '', /javascript/);
  t.is(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  const missing = await api.request('GET', '/assets/index-gone.js', { headers: html });
  t.is(missing.status, 404, 'a missing asset is not answered with the page');
});

test('a page of the app opened by a browser gets index.html; an API client asking the same path gets the JSON 404', async (t) => {
  const page = await api.request('GET', '/settings/api-keys', { headers: html });
  t.is(page.status, 200);
  t.is(page.body, INDEX);
  const client = await api.request('GET', '/settings/api-keys', { headers: { accept: 'application/json' } });
  t.is(client.status, 404);
  t.like(client.body, { code: 'NOT_FOUND' });
});

test('the API\'s paths are never the dashboard\'s, even from a browser', async (t) => {
  for (const path of ['/v1/nothing-here', '/api/nothing-here', '/metrics/nothing', '/docs', '/v2/deployments']) {
    const res = await api.request('GET', path, { headers: html });
    t.is(res.status, 404, path);
    t.is(typeof res.body, 'object', path);
  }
  const health = await api.request('GET', '/v1/health', { headers: html });
  t.deepEqual(health.body, { status: 'ok', checks: { database: 'ok' } });
  const openapi = await api.request('GET', '/v1/openapi', { headers: html });
  t.is(openapi.body.openapi?.slice(0, 2), '3.');
});

test('HEAD answers the headers alone; other methods and paths out of the folder are not served', async (t) => {
  const head = await fetch(`${api.url}/robots.txt`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.headers.get('content-length'), String('User-agent: *\n'.length));
  t.is(await head.text(), '');
  const post = await api.request('POST', '/', { headers: html, body: {} });
  t.is(post.status, 404);
  for (const path of ['/..%2f..%2fpackage.json', '/%2e%2e/%2e%2e/etc/passwd']) {
    const res = await api.request('GET', path, { headers: { accept: 'application/json' } });
    t.is(res.status, 404, path);
  }
});
