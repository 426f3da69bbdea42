// Profile and organization settings; a changed e-mail address is confirmed through a token mailed (to a
// real SMTP server) to the new address.
import test from 'ava';
import { sha256 } from '../../control-plane/auth/tokens.ts';
import { addMember, createApiKey, signup, type TestApi } from '../support/control-plane.ts';
import { signupAdmin } from '../support/admin.ts';
import { startMailingApi, type TestSmtp } from '../support/smtp.ts';

let api: TestApi;
let smtp: TestSmtp;
let close: () => Promise<void>;
test.before(async () => { ({ api, smtp, close } = await startMailingApi(import.meta.filename)); });
test.after.always(() => close?.());

const PROFILE = '/v1/settings/profile';
const VERIFY = '/v1/settings/profile/verify-email';
const ORGANIZATION = '/v1/settings/organization';
const LINK = /https:\/\/kiln\.example\/settings\/profile\/verify-email\?token=(verify_[A-Za-z0-9_-]{43})/;
let counter = 0;
const newAddress = () => `new-${++counter}-${Date.now()}@example.com`;

/** Asks for a new address and reads the token from the message the SMTP server received. */
async function changeEmail(token: string, email: string) {
  const res = await api.request('POST', PROFILE, { token, body: { email } });
  if (res.status !== 200) throw new Error(`change failed: ${res.status} ${JSON.stringify(res.body)}`);
  const mails = smtp.to(email.toLowerCase());
  return { res, token: LINK.exec(mails.at(-1)!.text)![1]! };
}

test('GET /v1/settings/profile shows name and address; POST changes the name', async (t) => {
  const user = await signup(api, 'profile');
  const res = await api.request('GET', `${PROFILE}?orgId=${user.organizationId}`, { token: user.token });
  t.is(res.status, 200);
  t.like(res.body, { id: user.userId, email: user.email, pendingEmail: null });
  t.regex(res.body.name, /^profile \d+$/);
  const renamed = await api.request('POST', PROFILE, { token: user.token, body: { name: '  Ada Lovelace ' } });
  t.is(renamed.status, 200);
  t.like(renamed.body, { name: 'Ada Lovelace', email: user.email });
  t.is((await api.request('GET', `${PROFILE}?orgId=${user.organizationId}`, { token: user.token })).body.name, 'Ada Lovelace');
});

test('the profile says the caller\'s role there and what they may do with this credential, so a client hides what would be refused', async (t) => {
  const owner = await signup(api, 'owner');
  const read = async (token: string) => (await api.request('GET', `${PROFILE}?orgId=${owner.organizationId}`, { token })).body;
  const mine = await read(owner.token);
  t.like(mine, { role: 'owner', platformAdmin: false });
  t.true(mine.permissions.includes('billing:write') && mine.permissions.includes('deployments:write'));
  t.false(mine.permissions.some((p: string) => p.startsWith('admin:')));

  const viewer = await addMember(api, owner.organizationId, 'viewer');
  const theirs = await read(viewer.token);
  t.like(theirs, { role: 'viewer', platformAdmin: false });
  t.true(theirs.permissions.includes('deployments:read'));
  t.false(theirs.permissions.includes('deployments:write'), 'a viewer changes nothing');
  t.false(theirs.permissions.includes('billing:read'));

  // A key narrows the role: read_only reads, and may not write even its owner's profile.
  const key = await createApiKey(api, owner.token, 'read_only');
  const keyed = await read(key.key);
  t.like(keyed, { role: 'owner' });
  t.true(keyed.permissions.includes('deployments:read'));
  t.false(keyed.permissions.includes('deployments:write'));
  t.false(keyed.permissions.includes('profile:write'));

  const admin = await signupAdmin(api);
  const administrator = (await api.request('GET', `${PROFILE}?orgId=${admin.organizationId}`, { token: admin.token })).body;
  t.like(administrator, { platformAdmin: true });
  t.true(administrator.permissions.includes('admin:read'));
});

test('a new address stays pending until the mailed token confirms it; then sign-in uses it; the token works once', async (t) => {
  const user = await signup(api);
  const email = newAddress();
  const { res, token } = await changeEmail(user.token, email.toUpperCase());
  t.like(res.body, { email: user.email, pendingEmail: email });
  const [mail] = smtp.to(email);
  t.deepEqual(mail!.to, [email]);
  t.is(mail!.subject, 'Confirm your new Kiln e-mail address');
  const { rows } = await api.pool.query('SELECT token_hash FROM email_verification WHERE user_id = $1', [user.userId]);
  t.deepEqual(rows, [{ token_hash: sha256(token) }]);
  // Until confirmed, the old address signs in.
  t.is((await api.request('POST', '/v1/auth/signin', { body: { email: user.email, password: user.password } })).status, 200);

  const confirmed = await api.request('POST', VERIFY, { token: user.token, body: { token } });
  t.is(confirmed.status, 200);
  t.like(confirmed.body, { email, pendingEmail: null });
  t.is((await api.request('POST', '/v1/auth/signin', { body: { email, password: user.password } })).status, 200);
  t.is((await api.request('POST', '/v1/auth/signin', { body: { email: user.email, password: user.password } })).status, 401);

  const again = await api.request('POST', VERIFY, { token: user.token, body: { token } });
  t.is(again.status, 422);
  t.regex(again.body.message, /token: this address has already been confirmed/);
});

test('confirming: another user\'s or an unknown token is 404, an expired or superseded one 422; asking for the current address cancels', async (t) => {
  const user = await signup(api);
  const other = await signup(api);
  const first = await changeEmail(user.token, newAddress());
  t.is((await api.request('POST', VERIFY, { token: other.token, body: { token: first.token } })).status, 404);
  t.is((await api.request('POST', VERIFY, { token: user.token, body: { token: 'verify_unknown' } })).status, 404);

  const second = await changeEmail(user.token, newAddress());
  const superseded = await api.request('POST', VERIFY, { token: user.token, body: { token: first.token } });
  t.is(superseded.status, 422);
  t.regex(superseded.body.message, /replaced/);

  await api.pool.query(`UPDATE email_verification SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [sha256(second.token)]);
  const expired = await api.request('POST', VERIFY, { token: user.token, body: { token: second.token } });
  t.is(expired.status, 422);
  t.regex(expired.body.message, /expired/);
  t.is((await api.request('GET', `${PROFILE}?orgId=${user.organizationId}`, { token: user.token })).body.pendingEmail, null);

  const third = await changeEmail(user.token, newAddress());
  const cancelled = await api.request('POST', PROFILE, { token: user.token, body: { email: user.email } });
  t.like(cancelled.body, { email: user.email, pendingEmail: null });
  t.is((await api.request('POST', VERIFY, { token: user.token, body: { token: third.token } })).status, 422);
  t.is((await api.request('GET', `${PROFILE}?orgId=${user.organizationId}`, { token: user.token })).body.email, user.email);
});

test('profile: bad input is 400/422 naming the field, an address in use is 409; nothing changes and nothing is mailed', async (t) => {
  const user = await signup(api);
  const other = await signup(api);
  for (const [body, status, field] of [
    [{ name: '' }, 422, 'name'],
    [{ email: 'not an address' }, 422, 'email'],
    [{ name: 5 }, 400, 'name'],
    [{ email: other.email }, 409, 'email'],
  ] as const) {
    const res = await api.request('POST', PROFILE, { token: user.token, body: body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(res.body.message.toLowerCase().includes(field), res.body.message);
  }
  t.is((await api.request('POST', VERIFY, { token: user.token, body: {} })).status, 400);
  t.is(smtp.to(other.email).length, 0);
  t.like((await api.request('GET', `${PROFILE}?orgId=${user.organizationId}`, { token: user.token })).body, { email: user.email, pendingEmail: null });
  t.regex((await api.request('GET', `${PROFILE}?orgId=${user.organizationId}`, { token: user.token })).body.name, /^user \d+$/);
});

test('an address change to an address the mail server refuses is 422 on email and leaves nothing pending', async (t) => {
  const user = await signup(api);
  const res = await api.request('POST', PROFILE, { token: user.token, body: { name: 'Changed', email: 'me@rejected.test' } });
  t.is(res.status, 422);
  t.regex(res.body.message, /^Invalid field email: the mail server refused this address/);
  t.like((await api.request('GET', `${PROFILE}?orgId=${user.organizationId}`, { token: user.token })).body, { pendingEmail: null, name: `user ${user.email.split('-')[1]}` });
});

test('GET /v1/settings/organization shows name, slug, contact, default region and plan; POST changes them', async (t) => {
  const signedUp = await api.request('POST', '/v1/auth/signup', {
    body: { email: newAddress(), password: 'correct horse battery', name: 'Ada', organizationName: 'Ünïcode & Co.' },
  });
  const owner = { token: signedUp.body.access_token, organizationId: signedUp.body.user.organization_id };
  const res = await api.request('GET', `${ORGANIZATION}?orgId=${owner.organizationId}`, { token: owner.token });
  t.is(res.status, 200);
  t.like(res.body, { id: owner.organizationId, name: 'Ünïcode & Co.', contactEmail: null, defaultRegion: 'us-east-1', plan: 'free', unverifiedModels: 'allow' });
  // A default slug: the name as a DNS label plus the id's random part, so it is unique from the start.
  t.is(res.body.slug, `unicode-co-${owner.organizationId.slice(4)}`);

  const slug = `engines-${Date.now()}`;
  const updated = await api.request('POST', ORGANIZATION, {
    token: owner.token, body: { name: 'Analytical Engines', slug, contactEmail: 'Ops@Engines.example', defaultRegion: 'eu-west-1', plan: 'free' },
  });
  t.is(updated.status, 200);
  t.like(updated.body, { name: 'Analytical Engines', slug, contactEmail: 'ops@engines.example', defaultRegion: 'eu-west-1', plan: 'free' });
  t.deepEqual((await api.request('GET', `${ORGANIZATION}?orgId=${owner.organizationId}`, { token: owner.token })).body, updated.body);
  const cleared = await api.request('POST', ORGANIZATION, { token: owner.token, body: { contactEmail: null } });
  t.like(cleared.body, { contactEmail: null, slug });
});

test('organization: bad input is 400/422 naming the field, a taken slug 409, the plan read-only; nothing changes', async (t) => {
  const owner = await signup(api);
  const other = await signup(api);
  const otherSlug = (await api.request('GET', `${ORGANIZATION}?orgId=${other.organizationId}`, { token: other.token })).body.slug;
  const before = (await api.request('GET', `${ORGANIZATION}?orgId=${owner.organizationId}`, { token: owner.token })).body;
  for (const [body, status, field] of [
    [{ slug: 'Has-Caps' }, 422, 'slug'],
    [{ slug: 'ab' }, 422, 'slug'],
    [{ slug: '-leading' }, 422, 'slug'],
    [{ slug: 'trailing-' }, 422, 'slug'],
    [{ slug: 'under_score' }, 422, 'slug'],
    [{ slug: 'x'.repeat(64) }, 422, 'slug'],
    [{ slug: otherSlug }, 409, 'slug'],
    [{ defaultRegion: 'mars-north-1' }, 422, 'defaultRegion'],
    [{ contactEmail: 'nobody' }, 422, 'contactEmail'],
    [{ plan: 'enterprise' }, 422, 'plan'],
    [{ name: '' }, 422, 'name'],
    [{ name: ['x'] }, 400, 'name'],
  ] as const) {
    const res = await api.request('POST', ORGANIZATION, { token: owner.token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(res.body.message.includes(field), res.body.message);
  }
  t.deepEqual((await api.request('GET', `${ORGANIZATION}?orgId=${owner.organizationId}`, { token: owner.token })).body, before);
});

test('no credential is 401; keys and roles get what their permissions allow; another organization is out of reach', async (t) => {
  const owner = await signup(api);
  for (const [method, path, body] of [['GET', PROFILE], ['POST', PROFILE, { name: 'x' }], ['POST', VERIFY, { token: 'verify_x' }], ['GET', ORGANIZATION], ['POST', ORGANIZATION, { name: 'x' }]] as const) {
    t.is((await api.request(method, path, { body })).status, 401, `${method} ${path}`);
  }
  const readOnly = await createApiKey(api, owner.token, 'read_only');
  t.is((await api.request('GET', `${PROFILE}?orgId=${owner.organizationId}`, { token: readOnly.key })).status, 200);
  t.is((await api.request('GET', `${ORGANIZATION}?orgId=${owner.organizationId}`, { token: readOnly.key })).status, 200);
  const { token: pending } = await changeEmail(owner.token, newAddress());
  const writes = [[PROFILE, { name: 'x' }], [VERIFY, { token: pending }], [ORGANIZATION, { name: 'x' }]] as const;
  for (const [path, body] of writes) t.is((await api.request('POST', path, { token: readOnly.key, body })).status, 403, path);
  const deploymentsOnly = await createApiKey(api, owner.token, 'deployments_only');
  for (const [path, body] of writes) t.is((await api.request('POST', path, { token: deploymentsOnly.key, body })).status, 403, path);
  for (const path of [PROFILE, ORGANIZATION]) t.is((await api.request('GET', `${path}?orgId=${owner.organizationId}`, { token: deploymentsOnly.key })).status, 403, path);
  t.like((await api.request('GET', `${PROFILE}?orgId=${owner.organizationId}`, { token: owner.token })).body, { email: owner.email, name: `user ${owner.email.split('-')[1]}` });
  t.not((await api.request('GET', `${ORGANIZATION}?orgId=${owner.organizationId}`, { token: owner.token })).body.name, 'x');

  // A viewer reads the organization and edits their own profile, but not the organization.
  const viewerEmail = newAddress();
  await api.request('POST', '/v1/team/invite', { token: owner.token, body: { email: viewerEmail, role: 'viewer' } });
  const inviteToken = /invite\/(invite_[A-Za-z0-9_-]{43})/.exec(smtp.to(viewerEmail)[0]!.text)![1]!;
  const viewer = (await api.request('POST', `/v1/team/invite/${inviteToken}/accept`, { body: { name: 'Viewer', password: 'viewer password' } })).body;
  t.is((await api.request('GET', `${ORGANIZATION}?orgId=${owner.organizationId}`, { token: viewer.access_token })).status, 200);
  t.is((await api.request('POST', PROFILE, { token: viewer.access_token, body: { name: 'Vi' } })).status, 200);
  const refused = await api.request('POST', ORGANIZATION, { token: viewer.access_token, body: { name: 'Mine now' } });
  t.is(refused.status, 403);
  t.is(refused.body.code, 'INSUFFICIENT_PERMISSIONS');

  // Another organization's settings are out of reach: orgId of an organization the caller is not in is refused.
  const other = await signup(api);
  t.is((await api.request('GET', `${ORGANIZATION}?orgId=${other.organizationId}`, { token: owner.token })).status, 403);
  t.is((await api.request('POST', ORGANIZATION, { token: owner.token, body: { name: 'x' }, headers: { 'X-Organization-ID': other.organizationId } })).status, 403);
  t.not((await api.request('GET', `${ORGANIZATION}?orgId=${other.organizationId}`, { token: other.token })).body.name, 'x');
});
