// Sign-up, sign-in, login, refresh rotation, the 401 answers of the spec, and a signed-in user's password change.
import test from 'ava';
import { SignJWT } from 'jose';
import { deriveKey } from '../../lib/keys.ts';
import { addMember, createApiKey, signup, startTestApi, type TestApi } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

const INVALID_KEY = { error: 'Unauthorized', message: 'Invalid API key', code: 'INVALID_API_KEY', statusCode: 401 };

test('sign-up creates a user and an organization and answers with a login session', async (t) => {
  const res = await api.request('POST', '/v1/auth/signup', {
    body: { email: 'Grace@Example.com', password: 'hunter2hunter2', name: 'Grace', organizationName: 'Navy' },
  });
  t.is(res.status, 201);
  t.like(res.body, { expires_in: 3600, token_type: 'bearer', user: { email: 'grace@example.com' } });
  t.regex(res.body.user.id, /^usr_[0-9a-z]{20}$/);
  t.regex(res.body.user.organization_id, /^org_[0-9a-z]{20}$/);
  t.truthy(res.body.access_token);
  t.truthy(res.body.refresh_token);
  // The new organization can use its token at once.
  const list = await api.request('GET', '/api/deployments', { token: res.body.access_token });
  t.is(list.status, 200);
});

test('sign-up honours Idempotency-Key: a retry gets the first session, not a conflict', async (t) => {
  const body = { email: 'retry@example.com', password: 'password123', name: 'R', organizationName: 'Retry' };
  const headers = { 'idempotency-key': 'signup-1' };
  const first = await api.request('POST', '/v1/auth/signup', { body, headers });
  const again = await api.request('POST', '/v1/auth/signup', { body, headers });
  t.is(again.status, 201);
  t.deepEqual(again.body, first.body);
  const other = await api.request('POST', '/v1/auth/signup', { body: { ...body, email: 'other@example.com' }, headers });
  t.is(other.status, 409);
  t.is(other.body.code, 'IDEMPOTENCY_KEY_REUSED');
});

test('behind a trusted proxy, an anonymous Idempotency-Key is kept per client address, however long the forwarded one', async (t) => {
  const proxied = await startTestApi(import.meta.filename, { databaseUrl: api.databaseUrl, config: { trustProxy: true } });
  try {
    const body = { email: 'proxied@example.com', password: 'password123', name: 'P', organizationName: 'Proxied' };
    const headers = { 'idempotency-key': 'signup-proxied', 'x-forwarded-for': `${'2001:db8::1,'.repeat(30)}203.0.113.9` };
    const first = await proxied.request('POST', '/v1/auth/signup', { body, headers });
    t.is(first.status, 201);
    t.deepEqual((await proxied.request('POST', '/v1/auth/signup', { body, headers })).body, first.body);
  } finally {
    await proxied.close();
  }
});

test('sign-up with a taken email is 409, whatever its case', async (t) => {
  const { email } = await signup(api);
  const res = await api.request('POST', '/v1/auth/signup', { body: { email: email.toUpperCase(), password: 'password123', name: 'X', organizationName: 'Y' } });
  t.is(res.status, 409);
  t.like(res.body, { code: 'RESOURCE_EXISTS', statusCode: 409, error: 'Conflict' });
});

test('sign-up with missing fields is 400, with a short password or bad email 422', async (t) => {
  const missing = await api.request('POST', '/v1/auth/signup', { body: { email: 'a@b.co' } });
  t.is(missing.status, 400);
  t.like(missing.body, { code: 'INVALID_REQUEST', statusCode: 400 });
  const short = await api.request('POST', '/v1/auth/signup', { body: { email: 'a@b.co', password: 'short', name: 'A', organizationName: 'B' } });
  t.is(short.status, 422);
  t.like(short.body, { code: 'VALIDATION_ERROR' });
  t.regex(short.body.message, /password/);
  const email = await api.request('POST', '/v1/auth/signup', { body: { email: 'not-an-email', password: 'password123', name: 'A', organizationName: 'B' } });
  t.is(email.status, 422);
  t.regex(email.body.message, /email/);
});

test('sign-in and login answer with the session; a wrong password is 401', async (t) => {
  const user = await signup(api);
  const signin = await api.request('POST', '/v1/auth/signin', { body: { email: user.email, password: user.password } });
  t.is(signin.status, 200);
  t.like(signin.body, { token_type: 'bearer', expires_in: 3600, user: { id: user.userId, email: user.email, organization_id: user.organizationId } });

  const login = await api.request('POST', '/api/auth/login', { body: { email: user.email, password: user.password } });
  t.is(login.status, 200);
  t.like(login.body, { success: true, error: null, data: { token_type: 'bearer', user: { id: user.userId } } });

  const wrong = await api.request('POST', '/api/auth/login', { body: { email: user.email, password: 'not the password' } });
  t.is(wrong.status, 401);
  t.like(wrong.body, { success: false, data: null, error: { code: 'INVALID_CREDENTIALS' } });
  const unknown = await api.request('POST', '/v1/auth/signin', { body: { email: 'nobody@example.com', password: 'whatever1' } });
  t.is(unknown.status, 401);
  t.is(unknown.body.message, wrong.body.error.message);
});

test('failed sign-ins with the longest e-mail addresses are counted and throttled like any other', async (t) => {
  const email = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
  t.is(email.length, 254);
  for (let i = 0; i < 5; i++) t.is((await api.request('POST', '/v1/auth/signin', { body: { email, password: 'wrong-password' } })).status, 401);
  t.is((await api.request('POST', '/v1/auth/signin', { body: { email, password: 'wrong-password' } })).status, 429);
});

test('repeated failed sign-ins for one account are throttled, even with the right password', async (t) => {
  const user = await signup(api);
  for (let i = 0; i < 5; i++) {
    const res = await api.request('POST', '/v1/auth/signin', { body: { email: user.email, password: `wrong-${i}-password` } });
    t.is(res.status, 401);
  }
  const throttled = await api.request('POST', '/v1/auth/signin', { body: { email: user.email, password: user.password } });
  t.is(throttled.status, 429);
  t.like(throttled.body, { code: 'RATE_LIMIT_EXCEEDED', statusCode: 429 });
  t.true(Number(throttled.headers.get('retry-after')) > 0);
  // Another account is unaffected.
  const other = await signup(api);
  const ok = await api.request('POST', '/v1/auth/signin', { body: { email: other.email, password: other.password } });
  t.is(ok.status, 200);
});

test('refresh rotates the pair; the old refresh token stops working', async (t) => {
  const user = await signup(api);
  const first = await api.request('POST', '/api/auth/refresh', { body: { refresh_token: user.refreshToken } });
  t.is(first.status, 200);
  t.like(first.body, { success: true, data: { token_type: 'bearer', expires_in: 3600 } });
  t.not(first.body.data.refresh_token, user.refreshToken);
  const me = await api.request('GET', '/api/deployments', { token: first.body.data.access_token });
  t.is(me.status, 200);
  const second = await api.request('POST', '/api/auth/refresh', { body: { refresh_token: first.body.data.refresh_token } });
  t.is(second.status, 200);
});

test('reusing a rotated refresh token revokes the whole family', async (t) => {
  const user = await signup(api);
  const rotated = await api.request('POST', '/api/auth/refresh', { body: { refresh_token: user.refreshToken } });
  const current = rotated.body.data.refresh_token;
  const reuse = await api.request('POST', '/api/auth/refresh', { body: { refresh_token: user.refreshToken } });
  t.is(reuse.status, 401);
  t.deepEqual(reuse.body, { success: false, data: null, error: { code: 'INVALID_API_KEY', message: 'Invalid API key', details: {} } });
  // The thief's reuse also kills the legitimate holder's newer token.
  const after = await api.request('POST', '/api/auth/refresh', { body: { refresh_token: current } });
  t.is(after.status, 401);
});

test('an unknown refresh token is 401; a missing one 400', async (t) => {
  const unknown = await api.request('POST', '/api/auth/refresh', { body: { refresh_token: 'rt_nope' } });
  t.is(unknown.status, 401);
  const missing = await api.request('POST', '/api/auth/refresh', { body: {} });
  t.is(missing.status, 400);
});

test('an expired refresh token is 401 Token expired', async (t) => {
  const user = await signup(api);
  await api.pool.query(`UPDATE refresh_token SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [user.userId]);
  const res = await api.request('POST', '/api/auth/refresh', { body: { refresh_token: user.refreshToken } });
  t.is(res.status, 401);
  t.is(res.body.error.message, 'Token expired');
});

test('no credential, a malformed header or a forged token is 401 Invalid API key in each format', async (t) => {
  const none = await api.request('GET', '/v1/deployments');
  t.is(none.status, 401);
  t.deepEqual(none.body, INVALID_KEY);
  const basic = await api.request('GET', '/v1/deployments', { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
  t.deepEqual(basic.body, INVALID_KEY);
  const forged = await api.request('GET', '/v1/deployments', { token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' });
  t.deepEqual(forged.body, INVALID_KEY);
  const platform = await api.request('GET', '/api/deployments');
  t.deepEqual(platform.body, { success: false, data: null, error: { code: 'INVALID_API_KEY', message: 'Invalid API key', details: {} } });
});

test('an expired access token is 401 Token expired', async (t) => {
  const user = await signup(api);
  const expired = await new SignJWT({ org: user.organizationId })
    .setProtectedHeader({ alg: 'HS256' }).setSubject(user.userId).setIssuer('kiln').setAudience('kiln-api')
    .setIssuedAt(Math.floor(Date.now() / 1000) - 7200).setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
    .sign(deriveKey('test-signing-key-0123456789abcdefghijklmnop', 'jwt'));
  const res = await api.request('GET', '/v1/deployments', { token: expired });
  t.is(res.status, 401);
  t.deepEqual(res.body, { ...INVALID_KEY, message: 'Token expired' });
});

test('X-Organization-ID switches only to organizations the caller belongs to', async (t) => {
  const a = await signup(api, 'a');
  const b = await signup(api, 'b');
  const own = await api.request('GET', '/api/deployments', { token: a.token, headers: { 'x-organization-id': a.organizationId } });
  t.is(own.status, 200);
  const foreign = await api.request('GET', '/api/deployments', { token: a.token, headers: { 'x-organization-id': b.organizationId } });
  t.is(foreign.status, 403);
  t.deepEqual(foreign.body.error, { code: 'INSUFFICIENT_PERMISSIONS', message: 'Insufficient permissions', details: {} });
  const viaQuery = await api.request('GET', `/v1/deployments?orgId=${b.organizationId}`, { token: a.token });
  t.is(viaQuery.status, 403);
  t.deepEqual(viaQuery.body, { error: 'Forbidden', message: 'Insufficient permissions', code: 'INSUFFICIENT_PERMISSIONS', statusCode: 403 });
});

test('a member of a second organization switches to it and acts with the role held there', async (t) => {
  const a = await signup(api, 'a');
  const b = await signup(api, 'b');
  // Invitations come later: join A's user to B's organization directly, once as member, once as viewer.
  await api.pool.query(`INSERT INTO membership (id, created_at, organization_id, user_id, role) VALUES ('mem_test_member', now(), $1, $2, 'member')`, [b.organizationId, a.userId]);
  const asMember = { token: a.token, headers: { 'x-organization-id': b.organizationId } };
  const created = await api.request('POST', '/api/deployments', { ...asMember, body: { name: 'in-b', model: 'a/b', runtime: 'vllm', gpu: 'nvidia-t4' } });
  t.is(created.status, 201);
  t.is((await api.request('GET', '/api/deployments', { token: b.token })).body.data[0].id, created.body.data.id);
  t.deepEqual((await api.request('GET', '/api/deployments', { token: a.token })).body.data, []);
  // A member does not manage the organization's API keys.
  t.is((await api.request('GET', `/v1/settings/api-keys?orgId=${b.organizationId}`, asMember)).status, 403);

  // Changed behind the API's back (as another replica would): seen once the cached access expires, within
  // seconds. An empty body is refused before it is read, so the probe changes nothing: 403 once a viewer.
  await api.pool.query(`UPDATE membership SET role = 'viewer' WHERE id = 'mem_test_member'`);
  await eventually('the viewer role to apply', async () => (await api.request('POST', '/api/deployments', { ...asMember, body: {} })).status === 403, 10_000);
  t.is((await api.request('GET', `/v1/deployments?orgId=${b.organizationId}`, { token: a.token })).status, 200);
  t.is((await api.request('DELETE', `/api/deployments/${created.body.data.id}`, asMember)).status, 403);
});

const signin = (email: string, password: string) => api.request('POST', '/v1/auth/signin', { body: { email, password } });

test('a password change needs the current one, signs out every other session and answers a new one', async (t) => {
  const user = await signup(api, 'changer');
  const elsewhere = await signin(user.email, user.password);
  const changed = await api.request('POST', '/v1/auth/password', { token: user.token, body: { currentPassword: user.password, newPassword: 'a brand new passphrase' } });
  t.is(changed.status, 200);
  t.like(changed.body, { token_type: 'bearer', user: { id: user.userId, email: user.email, organization_id: user.organizationId } });

  t.is((await signin(user.email, user.password)).status, 401, 'the old password no longer signs in');
  t.is((await signin(user.email, 'a brand new passphrase')).status, 200, 'the new one does');
  // Both sessions held before the change are over; the one the change answered goes on.
  for (const refreshToken of [user.refreshToken, elsewhere.body.refresh_token]) {
    t.is((await api.request('POST', '/api/auth/refresh', { body: { refresh_token: refreshToken } })).status, 401);
  }
  t.is((await api.request('POST', '/api/auth/refresh', { body: { refresh_token: changed.body.refresh_token } })).status, 200);
  // It is audited as a change to the user, without the passwords.
  const record = await eventually('the audit record', async () => (await api.pool.query(
    "SELECT resource_type, resource_id, status_code, to_jsonb(audit_log)::text AS whole FROM audit_log WHERE action = 'changePassword' AND user_id = $1", [user.userId])).rows[0]);
  t.like(record, { resource_type: 'user', resource_id: user.userId, status_code: 200 });
  t.false(record.whole.includes('brand new'), 'the audit record holds no password');
});

test('a password change with a wrong current password is 422 at that field, changes nothing and counts towards the lock-out', async (t) => {
  const user = await signup(api, 'forgetful');
  const wrong = await api.request('POST', '/v1/auth/password', { token: user.token, body: { currentPassword: 'not my password', newPassword: 'another passphrase' } });
  t.is(wrong.status, 422);
  t.like(wrong.body, { code: 'VALIDATION_ERROR', message: 'Invalid field currentPassword: is not your current password' });
  t.is((await signin(user.email, user.password)).status, 200, 'the password is unchanged');
  t.is((await api.request('POST', '/api/auth/refresh', { body: { refresh_token: user.refreshToken } })).status, 200, 'no session ended');
  // Guessing through this route is throttled as sign-in is: five failures, then 429 even for the right one.
  for (let i = 0; i < 5; i++) await api.request('POST', '/v1/auth/password', { token: user.token, body: { currentPassword: `guess-${i}-password`, newPassword: 'another passphrase' } });
  const throttled = await api.request('POST', '/v1/auth/password', { token: user.token, body: { currentPassword: user.password, newPassword: 'another passphrase' } });
  t.is(throttled.status, 429);
  t.true(Number(throttled.headers.get('retry-after')) > 0);
});

test('a password change with missing fields is 400; a short or unchanged new password 422; nothing changes', async (t) => {
  const user = await signup(api, 'sloppy');
  const change = (body: unknown) => api.request('POST', '/v1/auth/password', { token: user.token, body });
  const missing = await change({ currentPassword: user.password });
  t.is(missing.status, 400);
  t.like(missing.body, { code: 'INVALID_REQUEST', statusCode: 400 });
  t.regex(missing.body.message, /newPassword/);
  t.is((await change({ currentPassword: user.password, newPassword: 42 })).status, 400);
  t.is((await change({ currentPassword: user.password, newPassword: 'hunter2hunter2', extra: true })).status, 400);
  const short = await change({ currentPassword: user.password, newPassword: 'short' });
  t.is(short.status, 422);
  t.regex(short.body.message, /^Invalid field newPassword: /);
  const same = await change({ currentPassword: user.password, newPassword: user.password });
  t.is(same.status, 422);
  t.is(same.body.message, 'Invalid field newPassword: must differ from your current password');
  t.is((await signin(user.email, user.password)).status, 200);
});

test('a password change needs a signed-in session: none is 401, an API key of any scope 403, a viewer may change their own', async (t) => {
  const body = { currentPassword: 'whatever-password', newPassword: 'another passphrase' };
  t.is((await api.request('POST', '/v1/auth/password', { body })).status, 401);
  const owner = await signup(api, 'keyholder');
  for (const scope of ['full_access', 'deployments_only', 'read_only'] as const) {
    const key = await createApiKey(api, owner.token, scope);
    const res = await api.request('POST', '/v1/auth/password', { token: key.key, body: { currentPassword: owner.password, newPassword: 'stolen key passphrase' } });
    t.is(res.status, 403, scope);
  }
  t.is((await signin(owner.email, owner.password)).status, 200, 'no key changed the password');
  // A viewer of another organization changes their own password, and only theirs.
  const viewer = await addMember(api, owner.organizationId, 'viewer');
  const res = await api.request('POST', '/v1/auth/password', { ...viewer.as, body: { currentPassword: viewer.password, newPassword: 'viewer passphrase' } });
  t.is(res.status, 200);
  t.is(res.body.user.id, viewer.userId);
  t.is((await signin(viewer.email, 'viewer passphrase')).status, 200);
  t.is((await signin(owner.email, owner.password)).status, 200, "the organization owner's password is untouched");
});
