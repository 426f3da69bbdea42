import test from 'ava';
import { createApiKey, signup, startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
let production: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
  production = await startTestApi(import.meta.filename, {
    config: { env: 'production', signingKey: 'test-signing-key-0123456789abcdefghijklmnop', endpointDomain: 'endpoints.test', trustProxy: false, adminEmails: [] },
  });
});
test.after.always(async () => { await api?.close(); await production?.close(); });

const subscription = { url: 'https://hooks.example.com/kiln', events: ['deployment.running', 'deployment.failed'] };

test('POST /api/webhooks subscribes and shows a generated whsec_ secret once; GET never shows it; DELETE removes it', async (t) => {
  const { token } = await signup(api);
  const created = await api.request('POST', '/api/webhooks', { token, body: subscription });
  t.is(created.status, 201);
  t.like(created.body.data, subscription);
  t.regex(created.body.data.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const listed = await api.request('GET', '/api/webhooks', { token });
  t.deepEqual(listed.body.data, [{ id: created.body.data.id, ...subscription, createdAt: created.body.data.createdAt }]);
  const stored = await api.pool.query('SELECT sealed_secret FROM webhook_subscription WHERE id = $1', [created.body.data.id]);
  t.false(String(stored.rows[0].sealed_secret).includes(created.body.data.secret.slice(6)), 'the secret is sealed at rest');

  const deleted = await api.request('DELETE', `/api/webhooks/${created.body.data.id}`, { token });
  t.deepEqual(deleted.body.data, { id: created.body.data.id, deleted: true });
  t.deepEqual((await api.request('GET', '/api/webhooks', { token })).body.data, []);
});

test('a given secret is kept; attempts of a new subscription are an empty list', async (t) => {
  const { token } = await signup(api);
  const created = await api.request('POST', '/api/webhooks', { token, body: { ...subscription, secret: 'my-own-shared-secret-of-32-chars' } });
  t.is(created.body.data.secret, 'my-own-shared-secret-of-32-chars');
  const attempts = await api.request('GET', `/api/webhooks/${created.body.data.id}/attempts`, { token });
  t.deepEqual(attempts.body.data, []);
});

test('bad subscriptions are 400 (missing, wrong type) or 422 (broken rule) naming the field, and store nothing', async (t) => {
  const { token } = await signup(api);
  for (const [body, field, status] of [
    [{ ...subscription, url: 'ftp://hooks.example.com' }, 'url', 422],
    [{ ...subscription, url: 'not a url' }, 'url', 422],
    [{ ...subscription, events: ['deployment.exploded'] }, 'events', 422],
    [{ ...subscription, events: [] }, 'events', 422],
    [{ ...subscription, secret: 'short' }, 'secret', 422],
    [{ ...subscription, secret: 'whsec_not base64 at all, though long enough' }, 'secret', 422],
    [{ ...subscription, events: 'deployment.running' }, 'events', 400],
    [{ url: subscription.url }, 'events', 400],
  ] as const) {
    const res = await api.request('POST', '/api/webhooks', { token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(JSON.stringify(res.body.error.details).includes(field), `${field}: ${JSON.stringify(res.body.error.details)}`);
  }
  t.deepEqual((await api.request('GET', '/api/webhooks', { token })).body.data, []);
});

test('in production a URL on a loopback or private address is 422 (SSRF); in development it is allowed', async (t) => {
  const { token } = await signup(production);
  for (const url of ['http://127.0.0.1:9/hook', 'http://10.0.0.5/hook', 'http://169.254.169.254/latest', 'http://localhost:8080/x']) {
    const res = await production.request('POST', '/api/webhooks', { token, body: { ...subscription, url } });
    t.is(res.status, 422, url);
    t.is(res.body.error.details.fields[0].field, 'url');
  }
  const dev = await signup(api);
  t.is((await api.request('POST', '/api/webhooks', { token: dev.token, body: { ...subscription, url: 'http://127.0.0.1:9/hook' } })).status, 201);
});

test('no credential is 401; read-only and deployments-only keys may not subscribe; another organization\'s subscription is 404', async (t) => {
  const { token } = await signup(api);
  t.is((await api.request('POST', '/api/webhooks', { body: subscription })).status, 401);
  t.is((await api.request('GET', '/api/webhooks')).status, 401);
  const readOnly = await createApiKey(api, token, 'read_only');
  const refused = await api.request('POST', '/api/webhooks', { token: readOnly.key, body: subscription });
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'INSUFFICIENT_PERMISSIONS');
  t.is((await api.request('GET', '/api/webhooks', { token: readOnly.key })).status, 200);
  const deploymentsOnly = await createApiKey(api, token, 'deployments_only');
  t.is((await api.request('POST', '/api/webhooks', { token: deploymentsOnly.key, body: subscription })).status, 403);

  const mine = await api.request('POST', '/api/webhooks', { token, body: subscription });
  const other = await signup(api, 'other');
  t.is((await api.request('DELETE', `/api/webhooks/${mine.body.data.id}`, { token: other.token })).status, 404);
  t.is((await api.request('GET', `/api/webhooks/${mine.body.data.id}/attempts`, { token: other.token })).status, 404);
  t.deepEqual((await api.request('GET', '/api/webhooks', { token: other.token })).body.data, []);
});
