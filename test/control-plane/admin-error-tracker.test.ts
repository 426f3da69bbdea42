// The error tracker: unhandled errors (answered as 500) grouped by fingerprint in PostgreSQL, listed at
// /v1/admin/errortracker/issues, and forwarded to an external tracker (here a real local HTTP receiver).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { loadConfig } from '../../control-plane/config.ts';
import { fingerprintOf } from '../../control-plane/error-tracker/service.ts';
import { signupAdmin } from '../support/admin.ts';
import { signup, startTestApi, type TestApi } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';

/** A tracker that keeps every event it is sent. */
async function receiver() {
  const events: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      events.push({ ...JSON.parse(Buffer.concat(chunks).toString()), contentType: req.headers['content-type'] });
      res.statusCode = 202;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, events, close: () => server.close() };
}

let tracker: Awaited<ReturnType<typeof receiver>>;
let api: TestApi;
test.before(async () => {
  tracker = await receiver();
  api = await startTestApi(import.meta.filename, { config: { errorTrackerUrl: tracker.url } });
});
test.after.always(async () => { await api?.close(); tracker?.close(); });

// Serial: each test breaks a table of the file's database on purpose, and mends it.
test.serial('unhandled errors are answered 500, grouped by fingerprint with counts and first/last seen, and forwarded', async (t) => {
  const admin = await signupAdmin(api);
  const user = await signup(api);
  await api.pool.query('ALTER TABLE webhook_subscription RENAME TO webhook_subscription_away');
  try {
    for (let i = 0; i < 3; i++) {
      const res = await api.request('GET', '/api/webhooks', { token: user.token });
      t.is(res.status, 500);
      t.like(res.body, { success: false, error: { code: 'INTERNAL_ERROR', message: 'Internal server error' } }, 'no detail leaks to the caller');
    }
  } finally {
    await api.pool.query('ALTER TABLE webhook_subscription_away RENAME TO webhook_subscription');
  }
  await api.pool.query('ALTER TABLE api_key RENAME TO api_key_away');
  try {
    t.is((await api.request('GET', `/v1/settings/api-keys?orgId=${user.organizationId}`, { token: user.token })).status, 500);
  } finally {
    await api.pool.query('ALTER TABLE api_key_away RENAME TO api_key');
  }

  const res = await api.request('GET', '/v1/admin/errortracker/issues', { token: admin.token });
  t.is(res.status, 200);
  t.is(res.body.data.length, 2, 'two places failed: two issues');
  const [latest, earlier] = res.body.data;
  t.like(latest, { name: 'TableNotFoundException', count: 1 });
  t.regex(latest.message, /api_key/);
  t.regex(latest.lastRequest, /^GET \/v1\/settings\/api-keys \(/);
  t.like(earlier, { name: 'TableNotFoundException', count: 3 });
  t.regex(earlier.message, /webhook_subscription/);
  t.regex(earlier.stack, /webhooks\/service\.ts|service\.ts:\d+/);
  t.true(Date.parse(earlier.firstSeenAt) < Date.parse(earlier.lastSeenAt));
  t.true(Date.parse(earlier.lastSeenAt) <= Date.parse(latest.lastSeenAt));

  const forwarded = await eventually('4 events at the tracker', () => tracker.events.length >= 4 && tracker.events);
  t.is(forwarded.length, 4);
  t.like(forwarded.find((e) => e.fingerprint === latest.fingerprint), {
    name: 'TableNotFoundException', environment: 'development', contentType: 'application/json', request: { method: 'GET', path: '/v1/settings/api-keys' },
  });
  t.is(forwarded.filter((e) => e.fingerprint === earlier.fingerprint).length, 3);

  const page1 = await api.request('GET', '/v1/admin/errortracker/issues?limit=1', { token: admin.token });
  t.deepEqual(page1.body.data, [latest]);
  t.true(page1.body.pagination.hasMore);
  const page2 = await api.request('GET', `/v1/admin/errortracker/issues?limit=1&cursor=${encodeURIComponent(page1.body.pagination.nextCursor)}`, { token: admin.token });
  t.deepEqual(page2.body.data, [earlier]);
  t.deepEqual(page2.body.pagination, { hasMore: false, nextCursor: null });

  for (const query of ['limit=0', 'limit=x', 'cursor=forged.cursor']) {
    t.is((await api.request('GET', `/v1/admin/errortracker/issues?${query}`, { token: admin.token })).status, 400, query);
  }
  t.is((await api.request('GET', '/v1/admin/errortracker/issues', { token: user.token })).status, 403);
  t.is((await api.request('GET', '/v1/admin/errortracker/issues')).status, 401);
});

test.serial('a tracker that cannot be reached changes nothing for the caller; the issue is still counted', async (t) => {
  const down = await receiver();
  down.close();
  const isolated = await startTestApi(`${import.meta.filename}-down`, { config: { errorTrackerUrl: down.url } });
  t.teardown(() => isolated.close());
  const admin = await signupAdmin(isolated);
  await isolated.pool.query('ALTER TABLE webhook_subscription RENAME TO webhook_subscription_away');
  t.is((await isolated.request('GET', '/api/webhooks', { token: admin.token })).status, 500);
  await isolated.pool.query('ALTER TABLE webhook_subscription_away RENAME TO webhook_subscription');
  const issues = await isolated.request('GET', '/v1/admin/errortracker/issues', { token: admin.token });
  t.like(issues.body.data, [{ name: 'TableNotFoundException', count: 1 }]);
});

test('the fingerprint keeps the name and Kiln\'s own top frames, not the message or where Kiln is installed', (t) => {
  const make = (message: string, root: string) => {
    const e = new TypeError(message);
    e.stack = `TypeError: ${message}\n    at convert (${root}/node_modules/lib/index.js:10:5)\n    at Object.list (${root}/control-plane/webhooks/service.ts:42:17)\n    at async handle (file://${root}/control-plane/webhooks/routes.ts:12:3)`;
    return e;
  };
  const a = fingerprintOf(make('id dep_1 is broken', '/srv/kiln'));
  const b = fingerprintOf(make('id dep_2 is broken', '/home/ci/kiln'));
  t.is(a.fingerprint, b.fingerprint);
  t.is(a.stack, 'at Object.list (service.ts:42)\nat async handle (routes.ts:12)');
  const moved = make('x', '/srv/kiln');
  moved.stack = moved.stack!.replace('service.ts:42', 'service.ts:43');
  t.not(fingerprintOf(moved).fingerprint, a.fingerprint);
  t.not(fingerprintOf(Object.assign(make('x', '/srv/kiln'), { name: 'RangeError' })).fingerprint, a.fingerprint);
});

test('ERROR_TRACKER_URL must be an http(s) URL', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'kiln-tracker-'));
  t.is((await loadConfig('api', { DATA_DIR: dataDir })).errorTrackerUrl, undefined);
  t.is((await loadConfig('api', { DATA_DIR: dataDir, ERROR_TRACKER_URL: 'https://errors.example.com/api/1/store' })).errorTrackerUrl, 'https://errors.example.com/api/1/store');
  for (const value of ['ftp://errors.example.com', 'not a url']) {
    await t.throwsAsync(loadConfig('api', { DATA_DIR: dataDir, ERROR_TRACKER_URL: value }), { message: /ERROR_TRACKER_URL/ }, value);
  }
});
