// Payments over HTTP, against the local Stripe stand-in (stripe-mock, started by infra/with-test-servers.ts):
// checkout for credits and plans, plan changes, the customer portal, and Stripe's two webhooks with events
// signed as Stripe signs them. Stripe's answers come from stripe-mock; what Stripe would send later (a paid
// session) the tests send themselves, signed with the test webhook secrets.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import Stripe from 'stripe';
import { billingPeriod } from '../../catalog/billing.ts';
import { PLANS, type Plan } from '../../catalog/plans.ts';
import { addMember, createApiKey, signup, startTestApi, type TestApi } from '../support/control-plane.ts';
import { testStripeSettings } from '../support/stripe.ts';

const STRIPE = testStripeSettings();
/** A different limit per plan, so the header tells which plan a request was counted under. */
const LIMITS = Object.fromEntries(PLANS.map((plan, i) => [plan, { perMinute: 1000 * (i + 1), burst: 1000 * (i + 1) }])) as Record<Plan, { perMinute: number; burst: number }>;

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename, { config: { stripe: STRIPE }, rateLimits: LIMITS });
});
test.after.always(() => api?.close());

type User = Awaited<ReturnType<typeof signup>>;

const checkout = (token: string, body: unknown, headers: Record<string, string> = {}) => api.request('POST', '/v1/payprovider/checkout', { token, body, headers });

async function sessionOf(checkoutId: string): Promise<string> {
  const { rows } = await api.pool.query<{ stripe_session_id: string }>('SELECT stripe_session_id FROM checkout WHERE id = $1', [checkoutId]);
  return rows[0]!.stripe_session_id;
}

async function organization(id: string) {
  const { rows } = await api.pool.query<{ plan: Plan; credits_cents: number; stripe_customer_id: string | null; pending_plan: Plan | null; pending_plan_at: Date | null }>(
    'SELECT plan, credits_cents, stripe_customer_id, pending_plan, pending_plan_at FROM organization WHERE id = $1', [id]);
  return rows[0]!;
}

const count = async (sql: string, values: unknown[]) => Number((await api.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, values)).rows[0]!.n);

let eventCounter = 0;
const eventId = () => `evt_test${Date.now()}${++eventCounter}`;

/** A Stripe event as Stripe would deliver it to `path`: the JSON body and its Stripe-Signature. */
function delivery(event: Record<string, unknown>, secret: string) {
  const payload = JSON.stringify({ object: 'event', api_version: '2026-01-01', created: Math.floor(Date.now() / 1000), livemode: false, ...event });
  return { body: payload, headers: { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }) } };
}

function sessionEvent(type: string, session: Record<string, unknown>, id = eventId()) {
  return delivery({ id, type, data: { object: { object: 'checkout.session', ...session } } }, STRIPE.webhookSecret);
}

const deliver = (path: string, d: { body: string; headers: Record<string, string> }) => api.request('POST', path, d);

/** A paid session of `user`'s checkout, as Stripe describes it. */
async function paidSession(user: User, checkoutId: string, overrides: Record<string, unknown> = {}) {
  return {
    id: await sessionOf(checkoutId), client_reference_id: user.organizationId, metadata: { organizationId: user.organizationId, checkoutId },
    payment_status: 'paid', status: 'complete', ...overrides,
  };
}

test('checkout for credits: a Stripe session for the organization\'s Stripe customer, created once and reused, and the checkout row', async (t) => {
  const user = await signup(api, 'buyer');
  const res = await checkout(user.token, { kind: 'credits', amountCents: 2000 });
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like(res.body, { kind: 'credits', amountCents: 2000, plan: null, status: 'open' });
  t.regex(res.body.id, /^chk_[0-9a-z]{20}$/);
  t.regex(res.body.url, /^https:\/\//);
  const { rows } = await api.pool.query('SELECT organization_id, kind, amount_cents, status, stripe_session_id FROM checkout WHERE id = $1', [res.body.id]);
  t.like(rows[0], { organization_id: user.organizationId, kind: 'credits', amount_cents: 2000, status: 'open' });
  t.regex(rows[0].stripe_session_id, /^cs_/);
  const customer = (await organization(user.organizationId)).stripe_customer_id;
  t.regex(customer ?? '', /^cus_/);

  const plan = await checkout(user.token, { kind: 'plan', plan: 'growth' });
  t.is(plan.status, 201, JSON.stringify(plan.body));
  t.like(plan.body, { kind: 'plan', plan: 'growth', amountCents: null, status: 'open' });
  t.is((await organization(user.organizationId)).stripe_customer_id, customer, 'the same customer');
});

test('checkout honours Idempotency-Key: the same request again answers the same checkout; another request under the key is 409', async (t) => {
  const user = await signup(api, 'idem');
  const headers = { 'Idempotency-Key': 'top-up-1' };
  const first = await checkout(user.token, { kind: 'credits', amountCents: 1500 }, headers);
  const again = await checkout(user.token, { kind: 'credits', amountCents: 1500 }, headers);
  t.is(first.status, 201);
  t.is(again.status, 201);
  t.is(again.body.id, first.body.id);
  t.is(await count('checkout WHERE organization_id = $1', [user.organizationId]), 1);
  t.is((await checkout(user.token, { kind: 'credits', amountCents: 1600 }, headers)).status, 409);
});

test('checkout input: wrong types and unknown fields are 400, a broken rule 422 naming the field; nothing is created', async (t) => {
  const user = await signup(api, 'input');
  const field = async (body: unknown) => {
    const res = await checkout(user.token, body);
    return [res.status, /^Invalid field ([\w.]+):/.exec(res.body?.message ?? '')?.[1]];
  };
  t.deepEqual(await field({ kind: 'credits', amountCents: 499 }), [422, 'amountCents']);
  t.deepEqual(await field({ kind: 'credits', amountCents: 1_000_001 }), [422, 'amountCents']);
  t.deepEqual(await field({ kind: 'plan', plan: 'free' }), [422, 'plan']);
  t.deepEqual(await field({ kind: 'plan', plan: 'platinum' }), [422, 'plan']);
  t.deepEqual(await field({ kind: 'credits', amountCents: '2000' }), [400, 'amountCents']);
  t.deepEqual(await field({ kind: 'credits', amountCents: 20.5 }), [400, 'amountCents']);
  t.deepEqual(await field({ kind: 'credits' }), [400, 'amountCents']);
  t.is((await checkout(user.token, { kind: 'gold' })).status, 400);
  t.is((await checkout(user.token, { kind: 'credits', amountCents: 2000, organizationId: 'org_x' })).status, 400, 'unknown field');
  t.is((await checkout(user.token, 'not json{')).status, 400);
  t.is(await count('checkout WHERE organization_id = $1', [user.organizationId]), 0);
  t.is((await organization(user.organizationId)).stripe_customer_id, null);
});

test('credentials: 401 without one; billing is for owners and admins with full access: read-only and deployments-only keys, members and viewers are 403; another organization is 403', async (t) => {
  const owner = await signup(api, 'owner');
  const routes: Array<[string, unknown]> = [
    ['/v1/payprovider/checkout', { kind: 'credits', amountCents: 1000 }],
    ['/v1/billing/upgrade', { plan: 'startup' }],
    ['/v1/billing/portal', {}],
  ];
  const admin = await addMember(api, owner.organizationId, 'admin');
  const member = await addMember(api, owner.organizationId, 'member');
  const viewer = await addMember(api, owner.organizationId, 'viewer');
  const readOnly = await createApiKey(api, owner.token, 'read_only');
  const deploymentsOnly = await createApiKey(api, owner.token, 'deployments_only');
  const fullAccess = await createApiKey(api, owner.token, 'full_access');
  const stranger = await signup(api, 'stranger');
  for (const [path, body] of routes) {
    t.is((await api.request('POST', path, { body })).status, 401, path);
    for (const [label, options] of [['member', member.as], ['viewer', viewer.as], ['read-only key', { token: readOnly.key }], ['deployments-only key', { token: deploymentsOnly.key }]] as const) {
      t.is((await api.request('POST', path, { ...options, body })).status, 403, `${label} ${path}`);
    }
    t.is((await api.request('POST', path, { token: stranger.token, headers: { 'x-organization-id': owner.organizationId }, body })).status, 403, `another organization ${path}`);
  }
  t.is(await count('checkout WHERE organization_id = $1', [owner.organizationId]), 0, 'nothing created by the refused calls');
  for (const [label, options] of [['owner', { token: owner.token }], ['admin', admin.as], ['full-access key', { token: fullAccess.key }]] as const) {
    t.is((await api.request('POST', '/v1/payprovider/checkout', { ...options, body: { kind: 'credits', amountCents: 1000 } })).status, 201, label);
    t.is((await api.request('POST', '/v1/billing/portal', { ...options, body: {} })).status, 200, label);
  }
});

test('portal: a Stripe customer portal URL; concurrent first uses create one customer, kept for later', async (t) => {
  const user = await signup(api, 'portal');
  const answers = await Promise.all(Array.from({ length: 5 }, () => api.request('POST', '/v1/billing/portal', { token: user.token, body: {} })));
  t.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200, 200], JSON.stringify(answers.map((r) => r.body)));
  t.regex(answers[0]!.body.url, /^https:\/\//);
  const customer = (await organization(user.organizationId)).stripe_customer_id;
  t.regex(customer ?? '', /^cus_/);
  const later = await api.request('POST', '/v1/billing/portal', { token: user.token, body: { returnUrl: 'https://app.example/billing' } });
  t.is(later.status, 200);
  t.is((await organization(user.organizationId)).stripe_customer_id, customer);
  t.is((await api.request('POST', '/v1/billing/portal', { token: user.token, body: { returnUrl: 'not a url' } })).status, 422);
  t.is((await api.request('POST', '/v1/billing/portal', { token: user.token, body: { returnUrl: 5 } })).status, 400);
});

/** Relays requests to stripe-mock, counting them by method and path: what Kiln asked of Stripe. */
async function countingStripe(): Promise<{ url: string; calls: Map<string, number>; close(): Promise<void> }> {
  const calls = new Map<string, number>();
  const server = createServer(async (req, res) => {
    const key = `${req.method} ${req.url}`;
    calls.set(key, (calls.get(key) ?? 0) + 1);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await fetch(STRIPE.apiBase + req.url, {
      method: req.method, body: chunks.length ? Buffer.concat(chunks) : undefined,
      headers: Object.fromEntries(Object.entries(req.headers).filter(([name]) => ['authorization', 'content-type', 'idempotency-key', 'stripe-version'].includes(name)) as [string, string][]),
    });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

test('concurrent first uses of checkout and the portal ask Stripe for one customer; Stripe unreachable is 502 and stores nothing', async (t) => {
  const stripe = await countingStripe();
  t.teardown(() => stripe.close());
  const replica = await startTestApi(import.meta.filename, { databaseUrl: api.databaseUrl, config: { stripe: { ...STRIPE, apiBase: stripe.url } } });
  t.teardown(() => replica.close());
  const user = await signup(replica, 'concurrent');
  const answers = await Promise.all([
    ...Array.from({ length: 4 }, () => replica.request('POST', '/v1/billing/portal', { token: user.token, body: {} })),
    ...Array.from({ length: 4 }, () => replica.request('POST', '/v1/payprovider/checkout', { token: user.token, body: { kind: 'credits', amountCents: 1000 } })),
  ]);
  t.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200, 201, 201, 201, 201]);
  t.is(stripe.calls.get('POST /v1/customers'), 1);
  t.is(stripe.calls.get('POST /v1/checkout/sessions'), 4);

  const away = await startTestApi(import.meta.filename, { databaseUrl: api.databaseUrl, config: { stripe: { ...STRIPE, apiBase: 'http://127.0.0.1:9' } } });
  t.teardown(() => away.close());
  const stranded = await signup(away, 'stranded');
  const refused = await away.request('POST', '/v1/payprovider/checkout', { token: stranded.token, body: { kind: 'credits', amountCents: 1000 } });
  t.is(refused.status, 502);
  t.like(refused.body, { code: 'UPSTREAM_ERROR' });
  t.regex(refused.body.message, /^Stripe could not create the customer/);
  t.is((await organization(stranded.organizationId)).stripe_customer_id, null);
  t.is(await count('checkout WHERE organization_id = $1', [stranded.organizationId]), 0);
});

test('upgrade: a dearer plan is a checkout; a cheaper one waits for the next billing month; the same plan is 422; bad input changes nothing', async (t) => {
  const user = await signup(api, 'upgrader');
  const up = await api.request('POST', '/v1/billing/upgrade', { token: user.token, body: { plan: 'startup' } });
  t.is(up.status, 200, JSON.stringify(up.body));
  t.like(up.body, { change: 'upgrade', currentPlan: 'free', plan: 'startup', effectiveAt: null, checkout: { kind: 'plan', plan: 'startup', status: 'open' } });
  t.is((await organization(user.organizationId)).plan, 'free', 'unchanged until paid');

  const same = await api.request('POST', '/v1/billing/upgrade', { token: user.token, body: { plan: 'free' } });
  t.is(same.status, 422);
  t.regex(same.body.message, /^Invalid field plan:/);
  t.is((await api.request('POST', '/v1/billing/upgrade', { token: user.token, body: { plan: 'platinum' } })).status, 422);
  // Not one of the plans, whatever its type: the validator's rule for enumerations (422 naming the field).
  t.is((await api.request('POST', '/v1/billing/upgrade', { token: user.token, body: { plan: 3 } })).status, 422);
  t.is((await api.request('POST', '/v1/billing/upgrade', { token: user.token, body: {} })).status, 400);

  await api.pool.query(`UPDATE organization SET plan = 'growth' WHERE id = $1`, [user.organizationId]);
  const down = await api.request('POST', '/v1/billing/upgrade', { token: user.token, body: { plan: 'startup' } });
  t.is(down.status, 200, JSON.stringify(down.body));
  const nextMonth = billingPeriod(new Date()).end;
  t.deepEqual(down.body, { change: 'downgrade', currentPlan: 'growth', plan: 'startup', effectiveAt: nextMonth.toISOString(), checkout: null });
  t.like(await organization(user.organizationId), { plan: 'growth', pending_plan: 'startup', pending_plan_at: nextMonth });
  t.is(await count('checkout WHERE organization_id = $1', [user.organizationId]), 1, 'a downgrade creates no checkout');
});

test('a paid credits checkout adds its credits once, however often Stripe delivers the event', async (t) => {
  const user = await signup(api, 'paid');
  const before = (await organization(user.organizationId)).credits_cents;
  const created = await checkout(user.token, { kind: 'credits', amountCents: 2500 });
  const session = await paidSession(user, created.body.id);
  const event = sessionEvent('checkout.session.completed', session);
  const answers = [];
  for (let i = 0; i < 5; i++) answers.push(await deliver('/v1/payprovider/webhook', event));
  t.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200, 200]);
  t.deepEqual(answers.map((r) => r.body.duplicate), [false, true, true, true, true]);
  t.regex(answers[0]!.body.outcome, /^credited 2500 cents/);
  // Another event about the same session (Stripe's async success) credits nothing more.
  t.is((await deliver('/v1/payprovider/webhook', sessionEvent('checkout.session.async_payment_succeeded', session))).status, 200);
  t.is((await organization(user.organizationId)).credits_cents, before + 2500);
  t.is(await count('credit_entry WHERE organization_id = $1 AND reference = $2', [user.organizationId, `checkout:${session.id}`]), 1);
  const { rows } = await api.pool.query('SELECT status, completed_at FROM checkout WHERE id = $1', [created.body.id]);
  t.is(rows[0].status, 'completed');
  t.truthy(rows[0].completed_at);
  // Concurrent deliveries of one new event: one acts.
  const second = await checkout(user.token, { kind: 'credits', amountCents: 700 });
  const concurrent = sessionEvent('checkout.session.completed', await paidSession(user, second.body.id));
  const together = await Promise.all(Array.from({ length: 5 }, () => deliver('/v1/payprovider/webhook', concurrent)));
  t.deepEqual(together.map((r) => r.status), [200, 200, 200, 200, 200]);
  t.is(together.filter((r) => !r.body.duplicate).length, 1);
  t.is((await organization(user.organizationId)).credits_cents, before + 3200);
});

test('a webhook with a missing, forged or stale signature, or a body changed after signing, is 400 and changes nothing', async (t) => {
  const user = await signup(api, 'forged');
  const created = await checkout(user.token, { kind: 'credits', amountCents: 5000 });
  const session = await paidSession(user, created.body.id);
  const genuine = sessionEvent('checkout.session.completed', session);
  const forged = delivery({ id: eventId(), type: 'checkout.session.completed', data: { object: session } }, 'whsec_not_the_secret');
  const stale = (() => {
    const payload = JSON.stringify({ id: eventId(), type: 'checkout.session.completed', data: { object: session } });
    return { body: payload, headers: { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE.webhookSecret, timestamp: Math.floor(Date.now() / 1000) - 3600 }) } };
  })();
  const before = await organization(user.organizationId);
  const answers = [
    await deliver('/v1/payprovider/webhook', { body: genuine.body, headers: {} }),
    await deliver('/v1/payprovider/webhook', forged),
    await deliver('/v1/payprovider/webhook', stale),
    await deliver('/v1/payprovider/webhook', { body: genuine.body.replace('"paid"', '"paid" '), headers: genuine.headers }),
    await deliver('/v1/payprovider/webhook', { body: genuine.body, headers: { 'stripe-signature': 'garbage' } }),
    // Signed for the other endpoint's secret.
    await deliver('/v1/billing/webhook', genuine),
  ];
  t.deepEqual(answers.map((r) => r.status), [400, 400, 400, 400, 400, 400]);
  t.like(answers[1]!.body, { code: 'INVALID_REQUEST' });
  t.regex(answers[0]!.body.message, /Stripe-Signature/);
  t.deepEqual(await organization(user.organizationId), before);
  t.is(await count('credit_entry WHERE organization_id = $1 AND reference = $2', [user.organizationId, `checkout:${session.id}`]), 0);
  t.is(await count('payment_event WHERE organization_id = $1', [user.organizationId]), 0);
  t.is((await deliver('/v1/payprovider/webhook', { body: '{"id":1}', headers: genuine.headers })).status, 400, 'not an event');
});

test('an event naming another organization than the checkout\'s, or a session Kiln never created, changes nothing', async (t) => {
  const victim = await signup(api, 'victim');
  const attacker = await signup(api, 'attacker');
  const created = await checkout(victim.token, { kind: 'credits', amountCents: 9000 });
  const session = await sessionOf(created.body.id);
  const before = [await organization(victim.organizationId), await organization(attacker.organizationId)];
  const crossed = [
    { id: session, client_reference_id: attacker.organizationId, metadata: { organizationId: attacker.organizationId }, payment_status: 'paid' },
    { id: session, client_reference_id: victim.organizationId, metadata: { organizationId: attacker.organizationId }, payment_status: 'paid' },
    { id: session, metadata: { organizationId: victim.organizationId }, payment_status: 'paid' },
    { id: 'cs_test_never_created', client_reference_id: attacker.organizationId, metadata: { organizationId: attacker.organizationId }, payment_status: 'paid' },
  ];
  for (const object of crossed) {
    const res = await deliver('/v1/payprovider/webhook', sessionEvent('checkout.session.completed', object));
    t.is(res.status, 200);
    t.regex(res.body.outcome, /^ignored/);
  }
  t.deepEqual([await organization(victim.organizationId), await organization(attacker.organizationId)], before);
  t.is(await count('credit_entry WHERE reference = $1', [`checkout:${session}`]), 0);
  t.is((await api.pool.query('SELECT status FROM checkout WHERE id = $1', [created.body.id])).rows[0].status, 'open');
  // The genuine event still acts afterwards.
  const genuine = await deliver('/v1/payprovider/webhook', sessionEvent('checkout.session.completed', await paidSession(victim, created.body.id)));
  t.regex(genuine.body.outcome, /^credited 9000 cents/);
});

test('out of order: an expiry after payment changes nothing; a payment after expiry still credits; an unpaid completion waits', async (t) => {
  const user = await signup(api, 'order');
  const start = (await organization(user.organizationId)).credits_cents;
  const paidFirst = await checkout(user.token, { kind: 'credits', amountCents: 1000 });
  const paid = await paidSession(user, paidFirst.body.id);
  await deliver('/v1/payprovider/webhook', sessionEvent('checkout.session.completed', paid));
  const expiry = await deliver('/v1/payprovider/webhook', sessionEvent('checkout.session.expired', { ...paid, status: 'expired', payment_status: 'unpaid' }));
  t.regex(expiry.body.outcome, /^ignored/);
  t.is((await api.pool.query('SELECT status FROM checkout WHERE id = $1', [paidFirst.body.id])).rows[0].status, 'completed');

  const expiredFirst = await checkout(user.token, { kind: 'credits', amountCents: 600 });
  const late = await paidSession(user, expiredFirst.body.id);
  await deliver('/v1/payprovider/webhook', sessionEvent('checkout.session.expired', { ...late, status: 'expired', payment_status: 'unpaid' }));
  t.is((await api.pool.query('SELECT status FROM checkout WHERE id = $1', [expiredFirst.body.id])).rows[0].status, 'expired');
  await deliver('/v1/payprovider/webhook', sessionEvent('checkout.session.completed', late));
  t.is((await api.pool.query('SELECT status FROM checkout WHERE id = $1', [expiredFirst.body.id])).rows[0].status, 'completed');

  const asynchronous = await checkout(user.token, { kind: 'credits', amountCents: 800 });
  const pending = await paidSession(user, asynchronous.body.id, { payment_status: 'unpaid' });
  const waiting = await deliver('/v1/payprovider/webhook', sessionEvent('checkout.session.completed', pending));
  t.regex(waiting.body.outcome, /awaiting payment/);
  t.is((await organization(user.organizationId)).credits_cents, start + 1600);
  await deliver('/v1/payprovider/webhook', sessionEvent('checkout.session.async_payment_succeeded', { ...pending, payment_status: 'paid' }));
  t.is((await organization(user.organizationId)).credits_cents, start + 2400);
  // Event types neither endpoint acts on are recorded and ignored.
  const other = await deliver('/v1/payprovider/webhook', delivery({ id: eventId(), type: 'charge.refunded', data: { object: { id: 'ch_1' } } }, STRIPE.webhookSecret));
  t.is(other.status, 200);
  t.regex(other.body.outcome, /^ignored/);
});

test('a paid plan checkout changes the plan, and the next request is rate-limited by the new plan (cached credentials included)', async (t) => {
  const user = await signup(api, 'plan');
  const key = await createApiKey(api, user.token, 'full_access');
  // Both credentials are looked up, and cached, on the free plan first.
  t.is((await api.request('GET', '/v1/settings/profile', { token: key.key })).headers.get('x-ratelimit-limit'), String(LIMITS.free.perMinute));
  t.is((await api.request('GET', '/v1/settings/profile', { token: user.token })).headers.get('x-ratelimit-limit'), String(LIMITS.free.perMinute));
  const up = await api.request('POST', '/v1/billing/upgrade', { token: user.token, body: { plan: 'growth' } });
  t.is(up.status, 200, JSON.stringify(up.body));
  const res = await deliver('/v1/payprovider/webhook', sessionEvent('checkout.session.completed', await paidSession(user, up.body.checkout.id, { mode: 'subscription', subscription: 'sub_123' })));
  t.regex(res.body.outcome, /^plan changed to growth/);
  t.is((await organization(user.organizationId)).plan, 'growth');
  t.is((await api.request('GET', '/v1/settings/profile', { token: key.key })).headers.get('x-ratelimit-limit'), String(LIMITS.growth.perMinute));
  t.is((await api.request('GET', '/v1/settings/profile', { token: user.token })).headers.get('x-ratelimit-limit'), String(LIMITS.growth.perMinute));
});

test('a plan a subscription pays for: an upgrade moves that subscription to the new price and changes the plan now, with no second checkout; a downgrade renews cheaper, free cancels at the period end', async (t) => {
  const stripe = await countingStripe();
  t.teardown(() => stripe.close());
  const replica = await startTestApi(import.meta.filename, { databaseUrl: api.databaseUrl, config: { stripe: { ...STRIPE, apiBase: stripe.url } } });
  t.teardown(() => replica.close());
  const user = await signup(replica, 'subscribed');
  const first = await replica.request('POST', '/v1/billing/upgrade', { token: user.token, body: { plan: 'startup' } });
  t.truthy(first.body.checkout, 'from free, a checkout');
  await replica.request('POST', '/v1/payprovider/webhook', sessionEvent('checkout.session.completed', await paidSession(user, first.body.checkout.id, { mode: 'subscription', subscription: 'sub_kiln_test' })));
  const { rows: [paid] } = await api.pool.query<{ plan: string; stripe_subscription_id: string }>('SELECT plan, stripe_subscription_id FROM organization WHERE id = $1', [user.organizationId]);
  t.deepEqual(paid, { plan: 'startup', stripe_subscription_id: 'sub_kiln_test' });
  const sessions = stripe.calls.get('POST /v1/checkout/sessions');

  const up = await replica.request('POST', '/v1/billing/upgrade', { token: user.token, body: { plan: 'growth' } });
  t.is(up.status, 200, JSON.stringify(up.body));
  t.like(up.body, { change: 'upgrade', currentPlan: 'startup', plan: 'growth', checkout: null });
  t.true(Date.parse(up.body.effectiveAt) <= Date.now());
  t.is((await organization(user.organizationId)).plan, 'growth', 'changed now: Stripe bills the difference');
  t.is(stripe.calls.get('POST /v1/checkout/sessions'), sessions, 'no second checkout, so no second subscription');
  t.is(stripe.calls.get('GET /v1/subscriptions/sub_kiln_test'), 1);
  t.is(stripe.calls.get('POST /v1/subscriptions/sub_kiln_test'), 1);

  const down = await replica.request('POST', '/v1/billing/upgrade', { token: user.token, body: { plan: 'startup' } });
  t.like(down.body, { change: 'downgrade', plan: 'startup', checkout: null });
  t.like(await organization(user.organizationId), { plan: 'growth', pending_plan: 'startup' });
  t.is(stripe.calls.get('POST /v1/subscriptions/sub_kiln_test'), 2, 'renews at the cheaper price');
  const free = await replica.request('POST', '/v1/billing/upgrade', { token: user.token, body: { plan: 'free' } });
  t.like(free.body, { change: 'downgrade', plan: 'free' });
  t.is(stripe.calls.get('POST /v1/subscriptions/sub_kiln_test'), 3, 'cancelled at its period end');
});

test('the billing webhook: a cancelled subscription returns the organization to free when the month ends; a failed invoice is recorded; once per event', async (t) => {
  const user = await signup(api, 'subscriber');
  await api.request('POST', '/v1/billing/portal', { token: user.token, body: {} });
  await api.pool.query(`UPDATE organization SET plan = 'startup' WHERE id = $1`, [user.organizationId]);
  const customer = (await organization(user.organizationId)).stripe_customer_id!;
  const billing = (type: string, object: Record<string, unknown>, id = eventId()) => delivery({ id, type, data: { object } }, STRIPE.billingWebhookSecret);

  const active = await deliver('/v1/billing/webhook', billing('customer.subscription.updated', { id: 'sub_1', object: 'subscription', customer, status: 'active', cancel_at_period_end: false }));
  t.is(active.status, 200);
  t.like(await organization(user.organizationId), { plan: 'startup', pending_plan: null });

  const deleted = billing('customer.subscription.deleted', { id: 'sub_1', object: 'subscription', customer, status: 'canceled' });
  for (let i = 0; i < 3; i++) t.is((await deliver('/v1/billing/webhook', deleted)).status, 200);
  t.like(await organization(user.organizationId), { plan: 'startup', pending_plan: 'free', pending_plan_at: billingPeriod(new Date()).end });
  t.is(await count('payment_event WHERE organization_id = $1 AND type = $2', [user.organizationId, 'customer.subscription.deleted']), 1);

  const failed = await deliver('/v1/billing/webhook', billing('invoice.payment_failed', { id: 'in_1', object: 'invoice', customer }));
  t.regex(failed.body.outcome, /^payment failed for Stripe invoice in_1/);
  t.is(await count('payment_event WHERE organization_id = $1 AND type = $2', [user.organizationId, 'invoice.payment_failed']), 1);

  // A customer of no organization, or a subscription naming another organization than its customer's: nothing.
  const stranger = await signup(api, 'stranger');
  const ignored = [
    await deliver('/v1/billing/webhook', billing('customer.subscription.deleted', { id: 'sub_2', customer: 'cus_unknown', status: 'canceled' })),
    await deliver('/v1/billing/webhook', billing('customer.subscription.deleted', { id: 'sub_3', customer, status: 'canceled', metadata: { organizationId: stranger.organizationId } })),
  ];
  t.deepEqual(ignored.map((r) => [r.status, /^ignored/.test(r.body.outcome)]), [[200, true], [200, true]]);
  t.like(await organization(stranger.organizationId), { plan: 'free', pending_plan: null });
});

test('GET /v1/billing/webhook says whether Stripe is configured and which events each endpoint acts on', async (t) => {
  const res = await api.request('GET', '/v1/billing/webhook');
  t.is(res.status, 200);
  t.true(res.body.configured);
  t.deepEqual(res.body.events, ['customer.subscription.updated', 'customer.subscription.deleted', 'invoice.payment_failed']);
  t.deepEqual(res.body.endpoints.map((e: { path: string }) => e.path), ['/v1/billing/webhook', '/v1/payprovider/webhook']);
});

test('without Stripe configured (production with no STRIPE_SECRET_KEY) the Stripe routes answer 503 PAYMENTS_UNAVAILABLE; the rest works', async (t) => {
  const replica = await startTestApi(import.meta.filename, { databaseUrl: api.databaseUrl, config: { env: 'production', stripe: undefined } });
  t.teardown(() => replica.close());
  const user = await signup(replica, 'unpaid');
  const event = sessionEvent('checkout.session.completed', { id: 'cs_x', client_reference_id: user.organizationId, payment_status: 'paid' });
  const answers = [
    await replica.request('POST', '/v1/payprovider/checkout', { token: user.token, body: { kind: 'credits', amountCents: 1000 } }),
    await replica.request('POST', '/v1/billing/upgrade', { token: user.token, body: { plan: 'startup' } }),
    await replica.request('POST', '/v1/billing/portal', { token: user.token, body: {} }),
    await replica.request('POST', '/v1/payprovider/webhook', event),
    await replica.request('POST', '/v1/billing/webhook', event),
  ];
  t.deepEqual(answers.map((r) => [r.status, r.body.code]), Array.from({ length: 5 }, () => [503, 'PAYMENTS_UNAVAILABLE']));
  t.regex(answers[0]!.body.message, /Stripe is not configured/);
  t.is((await replica.request('GET', '/v1/billing/webhook')).body.configured, false);
  t.is((await replica.request('GET', `/v1/settings/profile?orgId=${user.organizationId}`, { token: user.token })).status, 200);
  t.is((await replica.request('GET', `/v1/credits?orgId=${user.organizationId}`, { token: user.token })).status, 200);
});
