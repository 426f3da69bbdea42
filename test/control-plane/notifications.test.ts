// /v1/notifications: a user's own notifications (theirs and the live platform announcements), marking them
// read, and their preferences.
import test from 'ava';
import { randomString } from '../../lib/ids.ts';
import type { MailMessage } from '../../control-plane/mail/mailer.ts';
import { notifyMembers, OWNERS_AND_ADMINS } from '../../workflows/notifications.ts';
import { ValidationError } from '../../control-plane/core/errors.ts';
import { addMember, createApiKey, signup, startTestApi, type TestApi } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';

let api: TestApi;
/** What the API e-mailed. */
const sent: MailMessage[] = [];
/** Addresses whose next sends fail: a count of passing failures, or 'refused' for a permanent refusal. */
const failing = new Map<string, number | 'refused'>();
test.before(async () => {
  api = await startTestApi(import.meta.filename, { mail: { mailer: { send: async (message) => {
    const failure = failing.get(message.to);
    if (failure === 'refused') throw new ValidationError('the mail server refused this address');
    if (failure) {
      failing.set(message.to, failure - 1);
      throw new Error('mail server busy');
    }
    sent.push(message);
  } }, publicUrl: 'http://kiln.test' } });
});
test.after.always(() => api?.close());

type User = { userId: string; organizationId: string };

/** A user notification written as the worker writes them, at `minutesAgo`. */
async function notice(user: User, kind: string, payload: Record<string, unknown>, minutesAgo: number, read = false): Promise<string> {
  const id = `unt_${randomString(20)}`;
  await api.pool.query(
    `insert into user_notification (id, created_at, user_id, organization_id, kind, payload, read_at)
     values ($1, now() - $5 * interval '1 minute', $2, $3, $4, $6::jsonb, case when $7 then now() else null end)`,
    [id, user.userId, user.organizationId, kind, minutesAgo, JSON.stringify(payload), read]);
  return id;
}

/** A platform announcement for the given organizations, created `minutesAgo`, live from `startsIn` minutes (negative: already). */
async function announce(organizationIds: string[], minutesAgo: number, window: { startsIn?: number; endsIn?: number } = {}): Promise<string> {
  const id = `ntf_${randomString(20)}`;
  await api.pool.query(
    `insert into notification (id, created_at, title, message, severity, organization_ids, starts_at, ends_at, updated_at)
     values ($1, now() - $2 * interval '1 minute', 'Maintenance', 'The API restarts at 02:00 UTC.', 'warning', $3::jsonb,
       now() + $4 * interval '1 minute', now() + $5 * interval '1 minute', now())`,
    [id, minutesAgo, JSON.stringify(organizationIds), window.startsIn ?? -1, window.endsIn ?? 60]);
  return id;
}

const deploymentFailed = (name: string) => ({ message: `Deployment ${name} failed: image pull error.`, deploymentId: 'dep_x', deploymentName: name, status: 'failed', reason: 'image pull error' });
const credits = { message: 'Your credit balance is down to 50 cents.', balanceCents: 50, lastTopUpCents: 1000, thresholdPercent: 5 };

test('the list: unread first then newest first, in cursor pages, each with a title, message, severity and its payload', async (t) => {
  const user = await signup(api);
  const oldUnread = await notice(user, 'credits.low', credits, 30);
  const newRead = await notice(user, 'deployment.failed', deploymentFailed('chat'), 1, true);
  const newUnread = await notice(user, 'deployment.failed', deploymentFailed('chat'), 5);
  const announcement = await announce([user.organizationId], 10);
  await announce([user.organizationId], 0, { startsIn: 30 }); // not live yet
  await announce([user.organizationId], 0, { startsIn: -60, endsIn: -1 }); // over

  const first = await api.request('GET', `/v1/notifications?orgId=${user.organizationId}&limit=2`, { token: user.token });
  t.is(first.status, 200);
  t.deepEqual(first.body.data.map((n: { id: string }) => n.id), [newUnread, announcement]);
  t.true(first.body.pagination.hasMore);
  t.like(first.body.data[0], { kind: 'deployment.failed', title: 'Deployment chat failed', message: 'Deployment chat failed: image pull error.', severity: 'critical', readAt: null, data: { deploymentName: 'chat' } });
  t.like(first.body.data[1], { kind: 'platform.announcement', title: 'Maintenance', severity: 'warning', readAt: null, data: {} });
  const second = await api.request('GET', `/v1/notifications?orgId=${user.organizationId}&limit=2&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`, { token: user.token });
  t.deepEqual(second.body.data.map((n: { id: string }) => n.id), [oldUnread, newRead]);
  t.like(second.body.data[0], { title: 'Your credits are running low', message: credits.message, severity: 'warning' });
  t.truthy(second.body.data[1].readAt);
  t.deepEqual(second.body.pagination, { hasMore: false, nextCursor: null });

  const unread = await api.request('GET', `/v1/notifications?orgId=${user.organizationId}&unread=true`, { token: user.token });
  t.deepEqual(unread.body.data.map((n: { id: string }) => n.id), [newUnread, announcement, oldUnread]);
  const read = await api.request('GET', `/v1/notifications?orgId=${user.organizationId}&unread=false`, { token: user.token });
  t.deepEqual(read.body.data.map((n: { id: string }) => n.id), [newRead]);
  const ofKind = await api.request('GET', `/v1/notifications?orgId=${user.organizationId}&kind=credits.low`, { token: user.token });
  t.deepEqual(ofKind.body.data.map((n: { id: string }) => n.id), [oldUnread]);
  const announcements = await api.request('GET', `/v1/notifications?orgId=${user.organizationId}&kind=platform.announcement`, { token: user.token });
  t.deepEqual(announcements.body.data.map((n: { id: string }) => n.id), [announcement]);
});

test('bad list parameters are 400 naming the parameter', async (t) => {
  const user = await signup(api);
  for (const query of ['unread=yes', 'kind=nope', 'limit=0', 'cursor=forged']) {
    const res = await api.request('GET', `/v1/notifications?orgId=${user.organizationId}&${query}`, { token: user.token });
    t.is(res.status, 400, query);
    t.true(JSON.stringify(res.body).includes(query.split('=')[0]!), query);
  }
});

test('marking one read, again (no change), and another user\'s, another organization\'s or an unknown id: 404, never listed', async (t) => {
  const user = await signup(api);
  const colleague = await addMember(api, user.organizationId, 'member');
  const stranger = await signup(api);
  const mine = await notice(user, 'credits.low', credits, 2);
  const theirs = await notice({ userId: colleague.userId, organizationId: user.organizationId }, 'credits.low', credits, 1);
  const elsewhere = await notice(stranger, 'credits.low', credits, 1);
  const foreignAnnouncement = await announce([stranger.organizationId], 1);

  const marked = await api.request('POST', `/v1/notifications/${mine}`, { token: user.token });
  t.is(marked.status, 200);
  t.like(marked.body, { id: mine, kind: 'credits.low' });
  t.truthy(marked.body.readAt);
  const again = await api.request('POST', `/v1/notifications/${mine}`, { token: user.token });
  t.is(again.status, 200);
  t.is(again.body.readAt, marked.body.readAt);

  for (const id of [theirs, elsewhere, foreignAnnouncement, 'unt_nosuchnotification0', 'x'.repeat(64)]) {
    t.is((await api.request('POST', `/v1/notifications/${id}`, { token: user.token })).status, 404, id);
  }
  const listed = await api.request('GET', `/v1/notifications?orgId=${user.organizationId}`, { token: user.token });
  t.deepEqual(listed.body.data.map((n: { id: string }) => n.id), [mine]);
  // The colleague's is still unread.
  const colleagues = await api.request('GET', `/v1/notifications?orgId=${user.organizationId}`, colleague.as);
  t.like(colleagues.body.data, [{ id: theirs, readAt: null }]);
});

test('platform announcements: marked read per user, by one and by all', async (t) => {
  const user = await signup(api);
  const colleague = await addMember(api, user.organizationId, 'viewer');
  const first = await announce([user.organizationId], 3);
  const second = await announce([user.organizationId], 2);
  const mine = await notice(user, 'credits.low', credits, 1);

  const one = await api.request('POST', `/v1/notifications/${first}`, { token: user.token });
  t.is(one.status, 200);
  t.like(one.body, { id: first, kind: 'platform.announcement' });
  t.truthy(one.body.readAt);
  t.is((await api.request('POST', `/v1/notifications/${first}`, { token: user.token })).body.readAt, one.body.readAt);

  const all = await api.request('POST', '/v1/notifications/mark-all-read', { token: user.token });
  t.is(all.status, 200);
  t.deepEqual(all.body, { marked: 2 });
  t.deepEqual((await api.request('POST', '/v1/notifications/mark-all-read', { token: user.token })).body, { marked: 0 });
  const listed = await api.request('GET', `/v1/notifications?orgId=${user.organizationId}`, { token: user.token });
  t.true(listed.body.data.every((n: { readAt: string | null }) => n.readAt !== null));
  t.deepEqual(listed.body.data.map((n: { id: string }) => n.id).sort(), [first, second, mine].sort());

  // The colleague's reads are their own.
  const theirs = await api.request('GET', `/v1/notifications?orgId=${user.organizationId}&unread=true`, colleague.as);
  t.deepEqual(theirs.body.data.map((n: { id: string }) => n.id), [second, first]);
});

test('preferences: defaults, merged changes, bad input named; a kind turned off in the app is neither created nor listed', async (t) => {
  const user = await signup(api);
  const defaults = await api.request('POST', '/v1/notifications', { token: user.token, body: {} });
  t.is(defaults.status, 200);
  t.like(defaults.body, { inApp: { 'deployment.failed': true, 'platform.announcement': true }, email: { 'deployment.failed': false } });

  const set = await api.request('POST', '/v1/notifications', { token: user.token, body: { inApp: { 'template.updated': false, 'platform.announcement': false }, email: { 'invoice.issued': true } } });
  t.is(set.status, 200);
  const more = await api.request('POST', '/v1/notifications', { token: user.token, body: { inApp: { 'platform.announcement': true }, email: { 'alert.fired': true } } });
  t.like(more.body, { inApp: { 'template.updated': false, 'platform.announcement': true, 'credits.low': true }, email: { 'invoice.issued': true, 'alert.fired': true, 'credits.low': false } });
  t.truthy(more.body.updatedAt);

  for (const [body, field] of [[{ inApp: { 'nope.kind': true } }, 'nope.kind'], [{ email: { 'alert.fired': 'yes' } }, 'alert.fired'], [{ other: {} }, 'other'], [{ inApp: [] }, 'inApp']] as const) {
    const res = await api.request('POST', '/v1/notifications', { token: user.token, body });
    t.true([400, 422].includes(res.status), JSON.stringify(body));
    t.true(JSON.stringify(res.body).includes(field), `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
  }

  // A template's update, through the API, skips the user who turned template.updated off.
  const author = await signup(api, 'author');
  const template = await api.request('POST', '/v1/templates/deploy', { token: author.token, body: {
    name: `public-${randomString(6)}`, visibility: 'public', configuration: { model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4' },
  } });
  t.is(template.status, 201, JSON.stringify(template.body));
  const follower = await signup(api, 'follower');
  for (const who of [user, follower]) t.is((await api.request('POST', `/v1/templates/${template.body.id}/star`, { token: who.token })).status < 300, true);
  const version = await api.request('POST', `/v1/templates/${template.body.id}/new-version`, { token: author.token, body: { configuration: { maxReplicas: 4 } } });
  t.is(version.status, 201, JSON.stringify(version.body));
  const followers = await api.request('GET', `/v1/notifications?orgId=${follower.organizationId}&kind=template.updated`, { token: follower.token });
  t.like(followers.body.data, [{ kind: 'template.updated', title: `Template ${template.body.name} has a new version` }]);
  t.deepEqual((await api.request('GET', `/v1/notifications?orgId=${user.organizationId}&kind=template.updated`, { token: user.token })).body.data, []);

  // Turned off in the app: existing ones are not listed either.
  await announce([user.organizationId], 1);
  await notice(user, 'credits.low', credits, 1);
  await api.request('POST', '/v1/notifications', { token: user.token, body: { inApp: { 'credits.low': false } } });
  const listed = await api.request('GET', `/v1/notifications?orgId=${user.organizationId}`, { token: user.token });
  t.deepEqual(listed.body.data.map((n: { kind: string }) => n.kind), ['platform.announcement']);
});

test('no credential: 401; a credential without the permission: 403; read-only keys read but do not mark', async (t) => {
  const user = await signup(api);
  t.is((await api.request('GET', '/v1/notifications')).status, 401);
  t.is((await api.request('POST', '/v1/notifications/mark-all-read')).status, 401);
  const deploymentsOnly = await createApiKey(api, user.token, 'deployments_only');
  t.is((await api.request('GET', `/v1/notifications?orgId=${user.organizationId}`, { token: deploymentsOnly.key })).status, 403);
  const readOnly = await createApiKey(api, user.token, 'read_only');
  t.is((await api.request('GET', `/v1/notifications?orgId=${user.organizationId}`, { token: readOnly.key })).status, 200);
  t.is((await api.request('POST', '/v1/notifications/mark-all-read', { token: readOnly.key })).status, 403);
  const viewer = await addMember(api, user.organizationId, 'viewer');
  t.is((await api.request('POST', '/v1/notifications/mark-all-read', viewer.as)).status, 200);
});

test('a kind asked for by e-mail: the API sends a copy through the mailer (template updates), besides the in-app one', async (t) => {
  const author = await signup(api, 'author');
  const template = await api.request('POST', '/v1/templates/deploy', { token: author.token, body: {
    name: `mailed-${randomString(6)}`, visibility: 'public', configuration: { model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4' },
  } });
  const [mailed, quiet] = [await signup(api, 'mailed'), await signup(api, 'quiet')];
  for (const who of [mailed, quiet]) t.true((await api.request('POST', `/v1/templates/${template.body.id}/star`, { token: who.token })).status < 300);
  t.is((await api.request('POST', '/v1/notifications', { token: mailed.token, body: { email: { 'template.updated': true } } })).status, 200);
  t.is((await api.request('POST', `/v1/templates/${template.body.id}/new-version`, { token: author.token, body: { configuration: { maxReplicas: 3 } } })).status, 201);

  const copies = await eventually('the e-mail copy', () => {
    const found = sent.filter((m) => m.subject === `Template ${template.body.name} has a new version`);
    return found.length > 0 && found;
  });
  t.deepEqual(copies.map((m) => m.to), [mailed.email]);
  t.regex(copies[0]!.text, /Version 2 replaces version 1; it changes maxReplicas/);
  for (const who of [mailed, quiet]) {
    t.is((await api.request('GET', `/v1/notifications?orgId=${who.organizationId}&kind=template.updated`, { token: who.token })).body.data.length, 1);
  }
});

test("the worker's notices are e-mailed to whoever asked for their kind: a busy mail server is tried again, a refused address given up", async (t) => {
  const owner = await signup(api, 'mail-owner');
  const admin = await addMember(api, owner.organizationId, 'admin');
  const other = await signup(api, 'mail-other');
  for (const as of [{ token: owner.token }, admin.as]) {
    t.is((await api.request('POST', '/v1/notifications', { ...as, body: { email: { 'deployment.failed': true } } })).status, 200);
  }
  t.is((await api.request('POST', '/v1/notifications', { token: other.token, body: { email: { 'deployment.failed': true } } })).status, 200);
  failing.set(owner.email, 2);
  failing.set(admin.email, 'refused');

  // Written as the deployment workflow's status store writes a failure: in its transaction.
  const name = `failing-${randomString(6)}`;
  await api.orm.em.fork().transactional((em) => notifyMembers(em, owner.organizationId, OWNERS_AND_ADMINS, 'deployment.failed', {
    message: `Deployment ${name} failed: no node has an L4 GPU free`, deploymentId: 'dep_mailtest', deploymentName: name, status: 'failed', reason: 'no node has an L4 GPU free',
  }));

  const copy = await eventually('the owner\'s copy after two failed sends', () => sent.find((m) => m.to === owner.email && m.text.includes(name)));
  t.regex(copy.text, /no node has an L4 GPU free/);
  t.regex(copy.text, /POST \/v1\/notifications/);
  const refused = await eventually('the refused copy given up', async () => {
    const [row] = (await api.pool.query(`select attempts, sent_at, last_error from notification_mail m join "user" u on u.id = m.user_id where u.email = $1`, [admin.email])).rows;
    return row?.attempts === 5 && row;
  });
  t.is(refused.sent_at, null);
  t.regex(refused.last_error, /refused/);
  t.false(sent.some((m) => m.to === other.email || m.to === admin.email), 'another organization and the refused address get nothing');
  t.is((await api.request('GET', `/v1/notifications?orgId=${owner.organizationId}&kind=deployment.failed`, admin.as)).body.data.length, 1, 'the in-app notice is there all the same');
});
