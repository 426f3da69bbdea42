// GET /v1/activity: the organization's feed merged from the records Kiln keeps (deployment events, members,
// API keys, alerts, billing), newest first, filtered, in keyset pages that neither skip nor repeat.
import test from 'ava';
import { moveCredits } from '../../control-plane/billing/credit-ledger.ts';
import { createStatusStore } from '../../workflows/deployment/status-store.ts';
import { addMember, createApiKey, signup, startTestApi, validDeployment, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => { api = await startTestApi(import.meta.filename); });
test.after.always(() => api?.close());

type Entry = { id: string; type: string; category: string; summary: string; actor: { kind: string; id: string; email: string | null } | null; resource: { type: string; id: string; name: string | null }; occurredAt: string };

/** The feed as `who` reads it, in their organization (orgId, which the reference row requires, unless the query names one). */
const activity = (who: { token: string; organizationId: string }, query = '') =>
  api.request('GET', `/v1/activity${query.includes('orgId=') ? query : `?orgId=${who.organizationId}${query.replace(/^\?/, '&')}`}`, { token: who.token });

/** An organization with one record of each kind: its grant and owner, a key (revoked), an invitation, a deployment running, a top-up. */
async function busyOrganization() {
  const owner = await signup(api, 'activity');
  const key = await createApiKey(api, owner.token, 'read_only');
  t0Wait();
  const invited = await api.request('POST', '/v1/team/invite', { token: owner.token, body: { email: `invitee-${Date.now()}@example.com`, role: 'member' } });
  if (invited.status !== 201) throw new Error(`invite: ${invited.status} ${JSON.stringify(invited.body)}`);
  const created = await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('feed') });
  if (created.status !== 201) throw new Error(`deployment: ${created.status} ${JSON.stringify(created.body)}`);
  const deploymentId = created.body.id as string;
  await createStatusStore(api.orm).record({ deploymentId, status: 'running', event: 'deployment.running', generation: 1, replicas: 1 });
  await api.orm.em.fork().transactional((em) => moveCredits(em, {
    organizationId: owner.organizationId, kind: 'top_up', amountCents: 2_500, reference: `test:${deploymentId}`, description: 'test top-up',
  }));
  const revoked = await api.request('DELETE', `/v1/settings/api-keys?id=${key.id}`, { token: owner.token });
  return { owner, key, deploymentId, invitationId: invited.body.id as string, revokedStatus: revoked.status };
}
// Distinct milliseconds between the first records, so the order asserted below is the order made.
function t0Wait() { const end = Date.now() + 2; while (Date.now() < end); }

async function walk(who: { token: string; organizationId: string }, query: string, limit: number): Promise<Entry[]> {
  const seen: Entry[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages += 1) {
    const res = await activity(who, `?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (res.status !== 200) throw new Error(`page: ${res.status} ${JSON.stringify(res.body)}`);
    seen.push(...res.body.data);
    cursor = res.body.pagination.nextCursor;
    if (!res.body.pagination.hasMore) return seen;
  }
  throw new Error('too many pages');
}

const newestFirst = (entries: Entry[]) => entries.every((e, i) => i === 0
  || entries[i - 1]!.occurredAt > e.occurredAt || (entries[i - 1]!.occurredAt === e.occurredAt && entries[i - 1]!.id > e.id));

test('the feed merges deployments, members, keys and billing, newest first, without secrets', async (t) => {
  const { owner, key, deploymentId, invitationId, revokedStatus } = await busyOrganization();
  t.is(revokedStatus, 200);
  const res = await activity(owner, '?limit=100');
  t.is(res.status, 200);
  const entries = res.body.data as Entry[];
  const types = entries.map((e) => e.type);
  for (const type of ['member.joined', 'credits.grant', 'api_key.created', 'member.invited', 'deployment.running', 'credits.top_up']) t.true(types.includes(type), type);
  t.true(newestFirst(entries));
  // Made in this order: the top-up after the deployment ran, the key before the invitation.
  t.true(types.indexOf('credits.top_up') < types.indexOf('deployment.running'));
  t.true(types.indexOf('member.invited') < types.indexOf('api_key.created'));
  t.true(types.indexOf('api_key.revoked') >= 0 && types.indexOf('api_key.revoked') < types.indexOf('credits.top_up'), 'the revocation, last');
  const running = entries.find((e) => e.type === 'deployment.running')!;
  t.deepEqual(running.resource, { type: 'deployment', id: deploymentId, name: 'feed' });
  t.is(running.category, 'deployments');
  t.regex(running.summary, /feed is running/);
  const keyCreated = entries.find((e) => e.type === 'api_key.created')!;
  t.deepEqual(keyCreated.actor, { kind: 'user', id: owner.userId, email: owner.email });
  t.is(keyCreated.category, 'keys');
  t.is(entries.find((e) => e.type === 'member.invited')!.resource.id, invitationId);
  t.regex(entries.find((e) => e.type === 'credits.top_up')!.summary, /\$25\.00/);
  t.false(JSON.stringify(res.body).includes(key.key), 'no key value');
  t.false(/hash|token/i.test(JSON.stringify(res.body)), 'no hashes or tokens');
});

test('filters: category (one or a list), type, resourceId, from and to', async (t) => {
  const { owner, deploymentId } = await busyOrganization();
  const keys = (await activity(owner, '?category=keys&limit=100')).body.data as Entry[];
  t.true(keys.length >= 1);
  t.true(keys.every((e) => e.category === 'keys'));
  const two = (await activity(owner, '?category=members,billing&limit=100')).body.data as Entry[];
  t.deepEqual([...new Set(two.map((e) => e.category))].sort(), ['billing', 'members']);
  const running = (await activity(owner, '?type=deployment.running')).body.data as Entry[];
  t.deepEqual(running.map((e) => e.type), ['deployment.running']);
  const about = (await activity(owner, `?resourceId=${deploymentId}`)).body.data as Entry[];
  t.true(about.length >= 1);
  t.true(about.every((e) => e.resource.id === deploymentId));
  const all = (await activity(owner, '?limit=100')).body.data as Entry[];
  const middle = all[Math.floor(all.length / 2)]!.occurredAt;
  const before = (await activity(owner, `?limit=100&to=${encodeURIComponent(middle)}`)).body.data as Entry[];
  const since = (await activity(owner, `?limit=100&from=${encodeURIComponent(middle)}`)).body.data as Entry[];
  t.true(before.every((e) => e.occurredAt < middle));
  t.true(since.every((e) => e.occurredAt >= middle));
  t.is(before.length + since.length, all.length);
});

test('cursor pages walk every entry once, across sources and entries sharing a millisecond', async (t) => {
  const { owner, deploymentId } = await busyOrganization();
  // Seven lifecycle events and two alert events in one millisecond.
  const at = new Date();
  for (let i = 0; i < 7; i += 1) {
    await api.pool.query(`INSERT INTO deployment_event (id, created_at, deployment_id, organization_id, type, generation, sequence, payload)
      VALUES ($1, $2, $3, $4, 'deployment.scaled', 1, $5, '{"data":{}}'::jsonb)`, [`evt_same${i}${Date.now()}`, at, deploymentId, owner.organizationId, i + 1]);
  }
  // An alert raised and resolved by hand, its two events moved into the same millisecond.
  const raised = await api.request('POST', '/v1/monitoring/alerts', { token: owner.token, body: { name: 'drill' } });
  t.is(raised.status, 201);
  t.is((await api.request('PUT', '/v1/monitoring/alerts', { token: owner.token, body: { id: raised.body.id, action: 'resolve' } })).status, 200);
  const moved = await api.pool.query('UPDATE alert_event SET created_at = $1 WHERE alert_id = $2', [at, raised.body.id]);
  t.is(moved.rowCount, 2);
  const whole = (await activity(owner, '?limit=100')).body.data as Entry[];
  t.true(whole.filter((e) => e.occurredAt === at.toISOString()).length >= 9);
  for (const limit of [1, 2, 3, 4]) {
    const walked = await walk(owner, '', limit);
    t.deepEqual(walked.map((e) => e.id), whole.map((e) => e.id), `limit ${limit}`);
    t.is(new Set(walked.map((e) => e.id)).size, walked.length);
  }
  const filtered = await walk(owner, '&category=deployments,alerts', 2);
  t.true(filtered.length >= 10);
  t.true(newestFirst(filtered));
});

test('refused: a tampered cursor, bad filters, no credential, another organization', async (t) => {
  const { owner } = await busyOrganization();
  const first = await activity(owner, '?limit=1');
  const cursor = first.body.pagination.nextCursor as string;
  const tampered = `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`;
  const bad = await activity(owner, `?cursor=${encodeURIComponent(tampered)}`);
  t.is(bad.status, 400);
  t.regex(bad.body.message, /cursor/);
  for (const [query, parameter] of [
    ['?category=payments', 'category'], ['?limit=0', 'limit'], ['?limit=101', 'limit'], ['?from=yesterday', 'from'],
    ['?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z', 'to'], ['?type=nope', 'type'],
  ] as const) {
    const res = await activity(owner, query);
    t.is(res.status, 400, query);
    t.regex(res.body.message, new RegExp(`parameter ${parameter}`), query);
  }
  t.is((await api.request('GET', '/v1/activity')).status, 401);
  const other = await signup(api, 'other');
  t.is((await activity(owner, `?orgId=${other.organizationId}`)).status, 403);
  t.is((await activity(owner, `?orgId=${owner.organizationId}`)).status, 200);
});

test('another organization\'s records never appear', async (t) => {
  const a = await busyOrganization();
  const b = await busyOrganization();
  const seen = await walk(a.owner, '', 100);
  const text = JSON.stringify(seen);
  t.false(text.includes(b.deploymentId));
  t.false(text.includes(b.key.id));
  t.false(text.includes(b.owner.userId));
  t.true(text.includes(a.deploymentId));
});

test('members and viewers see the feed without billing lines; a read-only key neither', async (t) => {
  const { owner, deploymentId } = await busyOrganization();
  for (const role of ['member', 'viewer']) {
    const user = await addMember(api, owner.organizationId, role);
    const res = await api.request('GET', `/v1/activity?orgId=${owner.organizationId}&limit=100`, user.as);
    t.is(res.status, 200, role);
    const entries = res.body.data as Entry[];
    t.true(entries.some((e) => e.resource.id === deploymentId), role);
    t.false(entries.some((e) => e.category === 'billing'), role);
    const billing = await api.request('GET', `/v1/activity?orgId=${owner.organizationId}&category=billing`, user.as);
    t.deepEqual(billing.body.data, [], role);
  }
  const readOnly = await createApiKey(api, owner.token, 'read_only');
  const byKey = (await activity({ token: readOnly.key, organizationId: owner.organizationId }, '?limit=100')).body.data as Entry[];
  t.true(byKey.length > 0);
  t.false(byKey.some((e) => e.category === 'billing'));
  t.true(((await activity(owner, '?category=billing')).body.data as Entry[]).length >= 2);
});

test('billing: a balance notice sent to every owner and admin is one entry; an issued invoice is one', async (t) => {
  const { owner } = await busyOrganization();
  await addMember(api, owner.organizationId, 'admin');
  const message = 'Your credit balance is down to 100 cents, 20% or less of your last top-up.';
  const notified = await api.pool.query(`INSERT INTO user_notification (id, created_at, user_id, organization_id, kind, payload)
    SELECT 'unt_t' || substr(md5(m.user_id), 1, 16), now(), m.user_id, m.organization_id, 'credits.low', $2::jsonb FROM membership m WHERE m.organization_id = $1`,
  [owner.organizationId, JSON.stringify({ message, balanceCents: 100, lastTopUpCents: 500, thresholdPercent: 20 })]);
  t.is(notified.rowCount, 2);
  await api.pool.query(`INSERT INTO invoice (id, created_at, organization_id, number, period_start, period_end, plan, plan_fee_cents, usage_cents,
    credits_applied_cents, total_cents, currency, lines, issued_at) VALUES ($1, now(), $2, 1, '2026-10-01', '2026-11-01', 'free', 0, 1234, 0, 1234, 'usd', '[]', now())`,
  [`inv_t${Date.now()}`, owner.organizationId]);
  const billing = (await activity(owner, '?category=billing&limit=100')).body.data as Entry[];
  const low = billing.filter((e) => e.type === 'credits.low');
  t.is(low.length, 1);
  t.is(low[0]!.summary, message);
  t.deepEqual(low[0]!.actor, { kind: 'system', id: 'system:billing', email: null });
  const invoice = billing.find((e) => e.type === 'invoice.issued')!;
  t.is(invoice.resource.name, 'Invoice 1');
  t.regex(invoice.summary, /\$12\.34 USD/);
});

/** POST /v1/deployments/{id}/actions as `who`; its status. */
const act = async (who: { token: string; headers?: Record<string, string> }, id: string, body: Record<string, unknown>) =>
  (await api.request('POST', `/v1/deployments/${id}/actions`, { ...who, body })).status;

test('a user\'s accepted stop, start, restart, scale and update appear with their e-mail; refused ones do not', async (t) => {
  const { owner, deploymentId } = await busyOrganization();
  const alice = await addMember(api, owner.organizationId, 'member', 'alice');
  const viewer = await addMember(api, owner.organizationId, 'viewer');
  for (const body of [{ action: 'stop' }, { action: 'start' }, { action: 'restart' }]) t.is(await act(alice.as, deploymentId, body), 200, body.action);
  t.is((await api.request('PATCH', `/api/deployments/${deploymentId}`, { ...alice.as, body: { maxReplicas: 3, replicas: 2 } })).status, 200);
  t.is(await act(alice.as, deploymentId, { action: 'scale', replicas: 3 }), 200);
  // Refused: a viewer's stop, a scale past the platform's limit, bounds the wrong way round, another organization's deployment.
  t.is(await act(viewer.as, deploymentId, { action: 'stop' }), 403);
  t.is(await act(alice.as, deploymentId, { action: 'scale', replicas: 101 }), 422);
  t.is((await api.request('PATCH', `/api/deployments/${deploymentId}`, { ...alice.as, body: { minReplicas: 3, maxReplicas: 2 } })).status, 422);
  const other = await busyOrganization();
  t.is(await act(alice.as, other.deploymentId, { action: 'restart' }), 404);

  const about = (await activity(owner, `?resourceId=${deploymentId}&limit=100`)).body.data as Entry[];
  const byAlice = about.filter((e) => e.actor?.id === alice.userId);
  t.deepEqual(byAlice.map((e) => e.type), ['deployment.scale', 'deployment.update', 'deployment.restart', 'deployment.start', 'deployment.stop'], 'each accepted action once, newest first');
  t.deepEqual(byAlice.map((e) => e.summary), [
    `${alice.email} scaled deployment feed to 3 replica(s)`,
    `${alice.email} updated the configuration of deployment feed (maxReplicas, replicas)`,
    `${alice.email} restarted deployment feed`,
    `${alice.email} started deployment feed`,
    `${alice.email} stopped deployment feed`,
  ]);
  for (const entry of byAlice) {
    t.deepEqual(entry.actor, { kind: 'user', id: alice.userId, email: alice.email });
    t.deepEqual(entry.resource, { type: 'deployment', id: deploymentId, name: 'feed' });
    t.is(entry.category, 'deployments');
  }
  t.false(about.some((e) => e.actor?.id === viewer.userId), 'the viewer\'s refused stop');
  t.is(about.filter((e) => e.type === 'deployment.update').length, 1, 'not the refused update');
  t.is(about.filter((e) => e.type === 'deployment.scale').length, 1, 'not the refused scale');
  // The type filter finds them; a viewer reads them too.
  t.deepEqual(((await activity(owner, '?type=deployment.restart')).body.data as Entry[]).map((e) => e.actor?.email), [alice.email]);
  const seenByViewer = (await api.request('GET', `/v1/activity?orgId=${owner.organizationId}&resourceId=${deploymentId}&limit=100`, viewer.as)).body.data as Entry[];
  t.deepEqual(seenByViewer.filter((e) => e.actor?.id === alice.userId).map((e) => e.id), byAlice.map((e) => e.id));
  // The refused restart of another organization's deployment is in neither feed.
  const elsewhere = await walk(other.owner, '', 100);
  t.false(elsewhere.some((e) => e.actor?.id === alice.userId));
  t.false(JSON.stringify(await walk(owner, '', 100)).includes(other.deploymentId));
});

test('another organization\'s users\' actions never appear', async (t) => {
  const a = await busyOrganization();
  const b = await busyOrganization();
  t.is(await act({ token: b.owner.token }, b.deploymentId, { action: 'restart' }), 200);
  t.is(await act({ token: a.owner.token }, a.deploymentId, { action: 'stop' }), 200);
  const seenByA = await walk(a.owner, '&category=deployments', 100);
  t.deepEqual(seenByA.filter((e) => e.actor?.kind === 'user').map((e) => [e.type, e.resource.id]), [['deployment.stop', a.deploymentId]]);
  t.false(JSON.stringify(seenByA).includes(b.owner.userId));
  const seenByB = await walk(b.owner, '&category=deployments', 100);
  t.deepEqual(seenByB.filter((e) => e.actor?.kind === 'user').map((e) => [e.type, e.resource.id]), [['deployment.restart', b.deploymentId]]);
});

test('a scale says from and to how many replicas; Kiln\'s own stop says whose and why', async (t) => {
  const { owner, deploymentId } = await busyOrganization();
  const store = createStatusStore(api.orm);
  await store.record({ deploymentId, status: 'running', event: 'deployment.scaled', generation: 1, sequence: 1, replicas: 3, previousReplicas: 1, reason: 'the load rose' });
  // An event from before the previous count was recorded.
  await store.record({ deploymentId, status: 'running', event: 'deployment.scaled', generation: 1, sequence: 2, replicas: 2 });
  await api.pool.query(`INSERT INTO audit_log (id, created_at, organization_id, user_id, action, resource_type, resource_id, ip_address, status_code, details)
    VALUES ($1, now(), $2, 'system:budgets', 'deployment.stop', 'deployment', $3, '127.0.0.1', 200, '{"reason":"the monthly budget is reached"}')`,
  [`aud_t${Date.now()}`, owner.organizationId, deploymentId]);
  const entries = (await activity(owner, `?resourceId=${deploymentId}&limit=100`)).body.data as Entry[];
  const scaled = entries.filter((e) => e.type === 'deployment.scaled');
  t.deepEqual(scaled.map((e) => e.summary).sort(), ['Deployment feed was scaled from 1 to 3 replica(s): the load rose', 'Deployment feed was scaled to 2 replica(s)']);
  const stop = entries.find((e) => e.type === 'deployment.stop')!;
  t.is(stop.summary, 'system:budgets stopped deployment feed (the monthly budget is reached)');
  t.deepEqual(stop.actor, { kind: 'system', id: 'system:budgets', email: null });
});
