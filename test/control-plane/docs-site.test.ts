// The documentation site served by the API at /docs, from the real build (npm run build:docs): its pages at
// clean URLs, hashed assets cached for good, the site's own 404 page with its status, and the API reference.
import test from 'ava';
import { docsDistForTests } from '../support/docs-site.ts';
import { startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename, { config: { docsDist: await docsDistForTests() } });
});
test.after.always(() => api?.close());

const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
const titleOf = (body: unknown) => /<title>([^<]*)<\/title>/.exec(String(body))?.[1];

test('/docs/ is the index, never cached; /docs leads there', async (t) => {
  const index = await api.request('GET', '/docs/', { headers: html });
  t.is(index.status, 200);
  t.regex(index.headers.get('content-type') ?? '', /^text\/html/);
  t.is(titleOf(index.body), 'Kiln');
  t.is(index.headers.get('cache-control'), 'no-cache');
  t.regex(index.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  const bare = await fetch(`${api.url}/docs?from=readme`, { redirect: 'manual' });
  t.is(bare.status, 301);
  t.is(bare.headers.get('location'), '/docs/?from=readme');
});

test('a page at its clean URL, and at its file name', async (t) => {
  const clean = await api.request('GET', '/docs/reference/cli', { headers: html });
  t.is(clean.status, 200);
  t.is(titleOf(clean.body), 'The kiln command line | Kiln');
  const file = await api.request('GET', '/docs/reference/cli.html', { headers: html });
  t.is(file.body, clean.body);
});

test('the API reference page', async (t) => {
  const res = await api.request('GET', '/docs/api', { headers: html });
  t.is(res.status, 200);
  t.is(titleOf(res.body), 'API reference | Kiln');
  // Its links to the served documents are Kiln's own paths, outside the site.
  t.regex(String(res.body), /href="\/api\/openapi\.json" target="_self"/);
  t.regex(String(res.body), /href="\/v1\/openapi" target="_self"/);
});

test('hashed assets are cached for good, with their type; HEAD answers the headers alone', async (t) => {
  const index = await api.request('GET', '/docs/', { headers: html });
  const script = /src="(\/docs\/assets\/app\.[\w-]+\.js)"/.exec(String(index.body))?.[1];
  t.truthy(script, 'the index loads the site\'s script');
  const res = await fetch(`${api.url}${script}`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /javascript/);
  t.is(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  const head = await fetch(`${api.url}${script}`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.headers.get('content-length'), res.headers.get('content-length'));
  t.is(await head.text(), '');
});

test('a page the site lacks is its 404 page, with the status 404; nothing outside the folder is served', async (t) => {
  for (const path of ['/docs/no-such-page', '/docs/reference/nothing.html', '/docs/..%2f..%2fpackage.json', '/docs/%2e%2e%2f%2e%2e%2fpackage.json']) {
    const res = await api.request('GET', path, { headers: html });
    t.is(res.status, 404, path);
    t.is(titleOf(res.body), '404 | Kiln', path);
    t.is(res.headers.get('cache-control'), 'no-cache', path);
  }
  // Only reading: other methods keep the API's answer.
  const post = await api.request('POST', '/docs/api', { headers: html, body: {} });
  t.is(post.status, 404);
  t.like(post.body, { code: 'NOT_FOUND' });
});
