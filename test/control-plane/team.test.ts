// Team: members and roles, invitations mailed through a real SMTP server, the invitee's side by token,
// and the last-owner rule.
import test from 'ava';
import { sha256 } from '../../control-plane/auth/tokens.ts';
import { createApiKey, signup, type TestApi } from '../support/control-plane.ts';
import { INVITATION_LINK, inviteByMail, startMailingApi, type TestSmtp } from '../support/smtp.ts';

let api: TestApi;
let smtp: TestSmtp;
let close: () => Promise<void>;
test.before(async () => { ({ api, smtp, close } = await startMailingApi(import.meta.filename)); });
test.after.always(() => close?.());

let counter = 0;
const newAddress = (label = 'invitee') => `${label}-${++counter}-${Date.now()}@example.com`;

type Owner = Awaited<ReturnType<typeof signup>>;

const invite = (owner: Owner, email: string, role?: string) => inviteByMail(api, smtp, owner.token, email, role);

async function accept(token: string, body: Record<string, unknown>) {
  return api.request('POST', `/v1/team/invite/${token}/accept`, { body });
}

/** A second member of `owner`'s organization, with their session there. */
async function join(owner: Owner, role = 'member') {
  const email = newAddress(role);
  const { token } = await invite(owner, email, role);
  const res = await accept(token, { name: `A ${role}`, password: 'another good password' });
  if (res.status !== 200) throw new Error(`accept failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { email, token: res.body.access_token as string, userId: res.body.user.id as string };
}

test('inviting mails the invitee an accept link with a token the API never returns and stores only hashed', async (t) => {
  const owner = await signup(api, 'inviter');
  const email = newAddress();
  const res = await api.request('POST', '/v1/team/invite', { token: owner.token, body: { email: email.toUpperCase(), role: 'admin' } });
  t.is(res.status, 201);
  t.like(res.body, { email, role: 'admin', status: 'pending', invitedBy: owner.userId, answeredAt: null });
  t.regex(res.body.id, /^inv_/);
  const days = (Date.parse(res.body.expiresAt) - Date.now()) / 86_400_000;
  t.true(days > 6.99 && days <= 7, `${days}`);

  const [mail] = smtp.to(email);
  t.truthy(mail);
  t.deepEqual(mail!.to, [email]);
  t.is(mail!.from, 'no-reply@kiln.test');
  t.regex(mail!.subject, /^inviter \d+ invited you to join inviter org \d+ on Kiln$/);
  t.regex(mail!.text, /as admin/);
  const token = INVITATION_LINK.exec(mail!.text)?.[1];
  t.truthy(token, mail!.text);
  t.false(JSON.stringify(res.body).includes(token!));

  const { rows } = await api.pool.query('SELECT * FROM invitation WHERE id = $1', [res.body.id]);
  t.is(rows[0].token_hash, sha256(token!));
  t.false(JSON.stringify(rows).includes(token!));

  const listed = await api.request('GET', '/v1/team/invitations', { token: owner.token });
  t.is(listed.status, 200);
  t.deepEqual(listed.body, [res.body]);
});

test('a new user looks up the invitation without a credential, accepts with a name and password, and is signed in as a member', async (t) => {
  const owner = await signup(api, 'team');
  const email = newAddress();
  const { token } = await invite(owner, email, 'viewer');

  const preview = await api.request('GET', `/v1/team/invite/${token}`);
  t.is(preview.status, 200);
  t.like(preview.body, { email, role: 'viewer', accountExists: false, invitedBy: { name: `team ${owner.email.split('-')[1]}` } });
  t.regex(preview.body.organization.name, /^team org/);

  const res = await accept(token, { name: 'Grace', password: 'a new password' });
  t.is(res.status, 200);
  t.like(res.body, { token_type: 'bearer', expires_in: 3600, user: { email, organization_id: owner.organizationId } });
  const members = await api.request('GET', '/v1/team/members', { token: res.body.access_token });
  t.is(members.status, 200);
  t.deepEqual(members.body.map((m: { email: string; role: string }) => [m.email, m.role]), [[owner.email, 'owner'], [email, 'viewer']]);
  t.like(members.body[1], { userId: res.body.user.id, name: 'Grace' });
  // The new account signs in like any other.
  t.is((await api.request('POST', '/v1/auth/signin', { body: { email, password: 'a new password' } })).status, 200);

  const again = await accept(token, { name: 'Grace', password: 'a new password' });
  t.is(again.status, 422);
  t.is(again.body.code, 'VALIDATION_ERROR');
  t.regex(again.body.message, /token: this invitation has already been accepted/);
  t.is((await api.request('GET', `/v1/team/invite/${token}`)).status, 422);
  t.is((await api.request('POST', `/v1/team/invite/${token}/decline`, { body: {} })).status, 422);
  const listed = await api.request('GET', '/v1/team/invitations', { token: owner.token });
  t.is(listed.body[0].status, 'accepted');
  t.truthy(listed.body[0].answeredAt);
});

test('an existing user accepts with their password; a wrong one is 401 and leaves the invitation usable', async (t) => {
  const owner = await signup(api, 'hiring');
  const invitee = await signup(api, 'existing');
  const { token } = await invite(owner, invitee.email, 'admin');
  t.true((await api.request('GET', `/v1/team/invite/${token}`)).body.accountExists);

  const wrong = await accept(token, { password: 'not the password' });
  t.is(wrong.status, 401);
  t.is(wrong.body.code, 'INVALID_CREDENTIALS');
  const res = await accept(token, { password: invitee.password });
  t.is(res.status, 200);
  t.like(res.body.user, { id: invitee.userId, organization_id: owner.organizationId });
  // Now a member of both: the session acts in the inviting organization, the old one still works with orgId.
  const org = await api.request('GET', `/v1/settings/organization?orgId=${owner.organizationId}`, { token: res.body.access_token });
  t.is(org.body.id, owner.organizationId);
  const own = await api.request('GET', `/v1/settings/organization?orgId=${invitee.organizationId}`, { token: res.body.access_token });
  t.is(own.body.id, invitee.organizationId);
  const members = await api.request('GET', '/v1/team/members', { token: owner.token });
  t.like(members.body[1], { userId: invitee.userId, role: 'admin' });
});

test('accept: a missing name for a new account or a missing password is 400, a short password 422; nothing is created', async (t) => {
  const owner = await signup(api, 'strict');
  const email = newAddress();
  const { token } = await invite(owner, email);
  for (const [body, status, field] of [
    [{ password: 'long enough password' }, 400, 'name'],
    [{ name: 'Ada' }, 400, 'password'],
    [{ name: 'Ada', password: 'short' }, 422, 'password'],
    [{ name: 'Ada', password: 12345678 }, 400, 'password'],
  ] as const) {
    const res = await accept(token, body);
    t.is(res.status, status, JSON.stringify(body));
    t.true(res.body.message.includes(field), res.body.message);
  }
  t.is((await api.pool.query('SELECT 1 FROM "user" WHERE email = $1', [email])).rowCount, 0);
  t.is((await api.request('GET', `/v1/team/invite/${token}`)).status, 200);
});

test('decline needs no credential and answers once; a declined invitation cannot be accepted', async (t) => {
  const owner = await signup(api);
  const email = newAddress();
  const { token, invitation } = await invite(owner, email);
  const res = await api.request('POST', `/v1/team/invite/${token}/decline`, { body: {} });
  t.is(res.status, 200);
  t.deepEqual(res.body, { declined: true });
  const again = await api.request('POST', `/v1/team/invite/${token}/decline`);
  t.is(again.status, 422);
  t.regex(again.body.message, /already been declined/);
  t.is((await accept(token, { name: 'X', password: 'a good password' })).status, 422);
  const listed = await api.request('GET', '/v1/team/invitations', { token: owner.token });
  t.like(listed.body.find((i: { id: string }) => i.id === invitation.id), { status: 'declined' });
});

test('a revoked invitation is refused by token (422); unknown tokens are 404, malformed ones 400', async (t) => {
  const owner = await signup(api);
  const { token, invitation } = await invite(owner, newAddress());
  const revoked = await api.request('DELETE', `/v1/team/invitations/${invitation.id}`, { token: owner.token });
  t.is(revoked.status, 200);
  t.like(revoked.body, { id: invitation.id, status: 'revoked' });
  for (const [method, suffix] of [['GET', ''], ['POST', '/accept'], ['POST', '/decline']] as const) {
    const res = await api.request(method, `/v1/team/invite/${token}${suffix}`, { body: method === 'POST' ? { name: 'X', password: 'a good password' } : undefined });
    t.is(res.status, 422, suffix);
    t.regex(res.body.message, /already been revoked/);
  }
  t.is((await api.request('DELETE', `/v1/team/invitations/${invitation.id}`, { token: owner.token })).status, 422, 'revoking twice');
  const unknown = `invite_${'A'.repeat(43)}`;
  t.is((await api.request('GET', `/v1/team/invite/${unknown}`)).status, 404);
  t.is((await accept(unknown, { name: 'X', password: 'a good password' })).status, 404);
  t.is((await api.request('GET', '/v1/team/invite/not-a-token')).status, 400);
});

test('an invitation expires after 7 days; a resend mails a new token, restarts the 7 days and kills the old token', async (t) => {
  const owner = await signup(api);
  const email = newAddress();
  const { token, invitation } = await invite(owner, email);
  await api.pool.query(`UPDATE invitation SET expires_at = now() - interval '1 second' WHERE id = $1`, [invitation.id]);
  for (const [method, suffix] of [['GET', ''], ['POST', '/accept'], ['POST', '/decline']] as const) {
    const res = await api.request(method, `/v1/team/invite/${token}${suffix}`, { body: method === 'POST' ? { name: 'X', password: 'a good password' } : undefined });
    t.is(res.status, 422, suffix);
    t.regex(res.body.message, /has expired/);
  }
  t.is((await api.request('GET', '/v1/team/invitations', { token: owner.token })).body[0].status, 'expired');

  const resent = await api.request('POST', `/v1/team/invitations/${invitation.id}`, { token: owner.token, body: { resend: true } });
  t.is(resent.status, 200);
  t.is(resent.body.status, 'pending');
  t.true(Date.parse(resent.body.expiresAt) > Date.now() + 6.9 * 86_400_000);
  const mails = smtp.to(email);
  t.is(mails.length, 2);
  const fresh = INVITATION_LINK.exec(mails[1]!.text)![1]!;
  t.not(fresh, token);
  t.is((await api.request('GET', `/v1/team/invite/${token}`)).status, 404);
  t.is((await accept(fresh, { name: 'Late', password: 'a good password' })).status, 200);
});

test('POST /v1/team/invitations/{id} changes the role; bad input is 400/422 naming the field and changes nothing', async (t) => {
  const owner = await signup(api);
  const { token, invitation } = await invite(owner, newAddress(), 'member');
  const changed = await api.request('POST', `/v1/team/invitations/${invitation.id}`, { token: owner.token, body: { role: 'viewer' } });
  t.is(changed.status, 200);
  t.is(changed.body.role, 'viewer');
  t.is((await api.request('GET', `/v1/team/invite/${token}`)).body.role, 'viewer');
  for (const [body, status, field] of [
    [{}, 400, 'role'],
    [{ role: 'superuser' }, 422, 'role'],
    [{ resend: 'yes' }, 400, 'resend'],
    [{ role: 7 }, 422, 'role'],
  ] as const) {
    const res = await api.request('POST', `/v1/team/invitations/${invitation.id}`, { token: owner.token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(res.body.message.includes(field), res.body.message);
  }
  t.is((await api.request('GET', `/v1/team/invite/${token}`)).body.role, 'viewer');
  t.is((await api.request('POST', '/v1/team/invitations/inv_unknown', { token: owner.token, body: { role: 'viewer' } })).status, 404);
});

test('invite: bad input is 400/422 naming the field; members and pending invitees are 409; nothing is stored or mailed', async (t) => {
  const owner = await signup(api);
  const pending = newAddress();
  await invite(owner, pending);
  const fresh = newAddress();
  for (const [body, status, field] of [
    [{ email: 'not-an-email', role: 'member' }, 422, 'email'],
    [{ email: fresh, role: 'god' }, 422, 'role'],
    [{ role: 'member' }, 400, 'email'],
    [{ email: 5, role: 'member' }, 400, 'email'],
    [{ email: owner.email, role: 'member' }, 409, 'member'],
    [{ email: pending, role: 'admin' }, 409, 'pending invitation'],
  ] as const) {
    const res = await api.request('POST', '/v1/team/invite', { token: owner.token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(res.body.message.includes(field), res.body.message);
  }
  t.is(smtp.to(fresh).length + smtp.to(owner.email).length, 0);
  t.is(smtp.to(pending).length, 1);
  t.is((await api.request('GET', '/v1/team/invitations', { token: owner.token })).body.length, 1);
});

test('mail that cannot be sent leaves no invitation behind: a refused address is 422 on email, a deferred one 503', async (t) => {
  const owner = await signup(api);
  const refused = await api.request('POST', '/v1/team/invite', { token: owner.token, body: { email: 'someone@rejected.test', role: 'member' } });
  t.is(refused.status, 422);
  t.regex(refused.body.message, /^Invalid field email: the mail server refused this address/);
  const deferred = await api.request('POST', '/v1/team/invite', { token: owner.token, body: { email: 'someone@deferred.test', role: 'member' } });
  t.is(deferred.status, 503);
  t.is(deferred.body.code, 'SERVICE_UNAVAILABLE');
  t.deepEqual((await api.request('GET', '/v1/team/invitations', { token: owner.token })).body, []);
});

test('no credential is 401 on every team route but the invitee\'s; keys and roles without team:write are 403', async (t) => {
  const owner = await signup(api);
  const { invitation } = await invite(owner, newAddress());
  const writes = [
    ['POST', '/v1/team/invite', { email: newAddress(), role: 'member' }],
    ['POST', `/v1/team/invitations/${invitation.id}`, { role: 'viewer' }],
    ['DELETE', `/v1/team/invitations/${invitation.id}`, undefined],
  ] as const;
  const reads = ['/v1/team/members', '/v1/team/invitations'];
  for (const [method, path, body] of writes) t.is((await api.request(method, path, { body })).status, 401, `${method} ${path}`);
  for (const path of reads) t.is((await api.request('GET', path)).status, 401, path);

  const readOnly = await createApiKey(api, owner.token, 'read_only');
  const deploymentsOnly = await createApiKey(api, owner.token, 'deployments_only');
  const member = await join(owner, 'member');
  const viewer = await join(owner, 'viewer');
  for (const token of [readOnly.key, deploymentsOnly.key, member.token, viewer.token]) {
    for (const [method, path, body] of writes) {
      const res = await api.request(method, path, { token, body });
      t.is(res.status, 403, `${method} ${path}`);
      t.is(res.body.code, 'INSUFFICIENT_PERMISSIONS');
    }
  }
  for (const token of [readOnly.key, member.token, viewer.token]) {
    for (const path of reads) t.is((await api.request('GET', path, { token })).status, 200, path);
  }
  for (const path of reads) t.is((await api.request('GET', path, { token: deploymentsOnly.key })).status, 403, path);
  const full = await createApiKey(api, owner.token, 'full_access');
  t.is((await api.request('POST', `/v1/team/invitations/${invitation.id}`, { token: full.key, body: { role: 'viewer' } })).status, 200);
  const listed = (await api.request('GET', '/v1/team/invitations', { token: owner.token })).body;
  t.like(listed.find((i: { id: string }) => i.id === invitation.id), { status: 'pending', role: 'viewer' });
});

test('another organization\'s invitations and members are 404 and stay untouched', async (t) => {
  const owner = await signup(api);
  const { invitation, token } = await invite(owner, newAddress());
  const other = await signup(api, 'other');
  t.is((await api.request('POST', `/v1/team/invitations/${invitation.id}`, { token: other.token, body: { role: 'viewer' } })).status, 404);
  t.is((await api.request('DELETE', `/v1/team/invitations/${invitation.id}`, { token: other.token })).status, 404);
  t.deepEqual((await api.request('GET', '/v1/team/invitations', { token: other.token })).body, []);
  t.is((await api.request('GET', '/v1/team/members', { token: other.token })).body.length, 1);
  t.like((await api.request('GET', `/v1/team/invite/${token}`)).body, { role: 'member' });
  t.is((await api.request('GET', '/v1/team/members', { token: owner.token })).body[0].role, 'owner');
});

test('only an owner grants or takes away the owner role', async (t) => {
  const owner = await signup(api);
  const admin = await join(owner, 'admin');
  for (const [method, path, body] of [
    ['POST', '/v1/team/invite', { email: newAddress(), role: 'owner' }],
  ] as const) {
    const res = await api.request(method, path, { token: admin.token, body });
    t.is(res.status, 403, `${method} ${path}`);
    t.regex(res.body.message, /only an owner/);
  }
  const invited = await api.request('POST', '/v1/team/invite', { token: owner.token, body: { email: newAddress(), role: 'owner' } });
  t.is(invited.status, 201);
});

test('wrong passwords at accept count towards the account\'s sign-in lock-out', async (t) => {
  const owner = await signup(api);
  const invitee = await signup(api, 'guessed');
  const { token } = await invite(owner, invitee.email);
  for (let i = 0; i < 5; i++) t.is((await accept(token, { password: `wrong password ${i}` })).status, 401);
  const locked = await accept(token, { password: invitee.password });
  t.is(locked.status, 429);
  t.truthy(locked.headers.get('retry-after'));
  t.is((await api.request('POST', '/v1/auth/signin', { body: { email: invitee.email, password: invitee.password } })).status, 429);
  t.is((await api.request('GET', `/v1/team/invite/${token}`)).status, 200, 'the invitation stays usable');
});

test('an inviter offers no role beyond their own: a custom role with team:write invites viewers, not members or admins', async (t) => {
  const owner = await signup(api);
  const recruiter = await join(owner, 'viewer');
  const role = await api.request('POST', '/v1/enterprise/roles', {
    token: owner.token,
    body: { name: 'Recruiter', permissions: ['team:read', 'team:write', 'deployments:read', 'catalog:read', 'templates:read', 'profile:read', 'profile:write', 'organization:read', 'alerts:read'] },
  });
  t.is(role.status, 201);
  t.is((await api.request('POST', '/v1/enterprise/assignments', { token: owner.token, body: { userId: recruiter.userId, roleId: role.body.id } })).status, 200);

  for (const offered of ['admin', 'member']) {
    const res = await api.request('POST', '/v1/team/invite', { token: recruiter.token, body: { email: newAddress(), role: offered } });
    t.is(res.status, 403, offered);
    t.regex(res.body.message, new RegExp(`the ${offered} role holds permissions you do not have`));
  }
  const viewer = await api.request('POST', '/v1/team/invite', { token: recruiter.token, body: { email: newAddress(), role: 'viewer' } });
  t.is(viewer.status, 201);
  const raised = await api.request('POST', `/v1/team/invitations/${viewer.body.id}`, { token: recruiter.token, body: { role: 'admin' } });
  t.is(raised.status, 403);
  t.is((await api.pool.query('SELECT role FROM invitation WHERE id = $1', [viewer.body.id])).rows[0].role, 'viewer', 'unchanged');
});
