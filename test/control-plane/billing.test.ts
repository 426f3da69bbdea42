// GET /v1/credits and GET /api/billing/usage on a real database: the balance with its ledger (grants, top-ups,
// metered debits) in cursor pages, and this period's usage read live from the replica history, with tokens from
// the audit records and the projection. Billing is for full-access credentials of owners and admins.
import test from 'ava';
import { billingPeriod } from '../../catalog/billing.ts';
import { moveCredits } from '../../control-plane/billing/credit-ledger.ts';
import { createStatusStore } from '../../workflows/deployment/status-store.ts';
import { addMember, createApiKey, signup, signupWithDeployment, startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => { api = await startTestApi(import.meta.filename); });
test.after.always(() => api?.close());

const credits = (token: string, organizationId: string, query = '') => api.request('GET', `/v1/credits?orgId=${organizationId}${query}`, { token });

async function move(organizationId: string, kind: 'top_up' | 'debit' | 'adjustment', amountCents: number, reference: string) {
  await api.orm.em.fork().transactional((em) => moveCredits(em, { organizationId, kind, amountCents, reference, description: `test ${kind}` }));
}

test('a new organization\'s credits: the free grant opens the ledger', async (t) => {
  const owner = await signup(api);
  const res = await credits(owner.token, owner.organizationId);
  t.is(res.status, 200);
  t.like(res.body, { balanceCents: 2_500, lastTopUpCents: 2_500, lowBalancePercent: null, exhaustedAt: null, deploymentsStoppedAt: null, totals: { grantedCents: 2_500, toppedUpCents: 0, debitedCents: 0, adjustedCents: 0 }, pagination: { hasMore: false, nextCursor: null } });
  t.like(res.body.entries, [{ kind: 'grant', amountCents: 2_500, balanceAfterCents: 2_500, reference: 'sign-up-grant' }]);
});

test('the ledger newest first in cursor pages, filtered by kind; each line keeps the balance after it; a reference moves the balance once', async (t) => {
  const owner = await signup(api);
  await move(owner.organizationId, 'top_up', 1_000, 'checkout:cs_test_1');
  await move(owner.organizationId, 'debit', -35, 'usage:usi_test_1');
  await move(owner.organizationId, 'debit', -35, 'usage:usi_test_1'); // again: nothing
  await move(owner.organizationId, 'debit', -12, 'usage:usi_test_2');
  const all = await credits(owner.token, owner.organizationId);
  t.is(all.body.balanceCents, 2_500 + 1_000 - 35 - 12);
  t.deepEqual(all.body.entries.map((e: { kind: string; amountCents: number; balanceAfterCents: number }) => [e.kind, e.amountCents, e.balanceAfterCents]),
    [['debit', -12, 3_453], ['debit', -35, 3_465], ['top_up', 1_000, 3_500], ['grant', 2_500, 2_500]]);
  t.like(all.body.totals, { grantedCents: 2_500, toppedUpCents: 1_000, debitedCents: 47, adjustedCents: 0 });
  t.is(all.body.lastTopUpCents, 1_000);

  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await credits(owner.token, owner.organizationId, `&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.is(page.status, 200);
    seen.push(...page.body.entries.map((e: { id: string }) => e.id));
    cursor = page.body.pagination.nextCursor;
  } while (cursor);
  t.deepEqual(seen, all.body.entries.map((e: { id: string }) => e.id));

  const debits = await credits(owner.token, owner.organizationId, '&kind=debit');
  t.deepEqual(debits.body.entries.map((e: { reference: string }) => e.reference), ['usage:usi_test_2', 'usage:usi_test_1']);
});

test('GET /v1/credits: bad input is 400 naming the parameter and changes nothing', async (t) => {
  const owner = await signup(api);
  for (const [query, parameter] of [['&limit=0', 'limit'], ['&limit=abc', 'limit'], ['&kind=refund', 'kind'], ['&cursor=forged', 'cursor'], ['&extra=1', 'extra']] as const) {
    const res = await credits(owner.token, owner.organizationId, query);
    t.is(res.status, 400, query);
    t.regex(JSON.stringify(res.body), new RegExp(parameter), query);
  }
  const missing = await api.request('GET', '/v1/credits', { token: owner.token });
  t.is(missing.status, 400);
  t.regex(missing.body.message, /orgId/);
  t.is((await credits(owner.token, owner.organizationId)).body.balanceCents, 2_500);
});

test('billing is full access for owners and admins: no credential 401; read-only and deployments-only keys, members and viewers 403; another organization 403 and never seen', async (t) => {
  const owner = await signup(api);
  const other = await signup(api);
  t.is((await api.request('GET', `/v1/credits?orgId=${owner.organizationId}`)).status, 401);
  t.is((await api.request('GET', '/api/billing/usage')).status, 401);
  for (const scope of ['read_only', 'deployments_only'] as const) {
    const { key } = await createApiKey(api, owner.token, scope);
    t.is((await credits(key, owner.organizationId)).status, 403, scope);
    t.is((await api.request('GET', '/api/billing/usage', { token: key })).status, 403, scope);
  }
  const { key: fullKey } = await createApiKey(api, owner.token, 'full_access');
  t.is((await credits(fullKey, owner.organizationId)).status, 200);
  for (const role of ['member', 'viewer']) {
    const user = await addMember(api, owner.organizationId, role);
    t.is((await api.request('GET', `/v1/credits?orgId=${owner.organizationId}`, user.as)).status, 403, role);
    t.is((await api.request('GET', '/api/billing/usage', user.as)).status, 403, role);
  }
  const admin = await addMember(api, owner.organizationId, 'admin');
  t.is((await api.request('GET', `/v1/credits?orgId=${owner.organizationId}`, admin.as)).status, 200);
  t.is((await api.request('GET', '/api/billing/usage', admin.as)).status, 200);
  // Another organization's orgId is refused; its own ledger shows none of the first organization's lines.
  await move(owner.organizationId, 'top_up', 700, 'checkout:cs_owner_only');
  t.is((await credits(other.token, owner.organizationId)).status, 403);
  const theirs = await credits(other.token, other.organizationId);
  t.false(JSON.stringify(theirs.body).includes('cs_owner_only'));
  t.is(theirs.body.balanceCents, 2_500);
});

test('GET /api/billing/usage: this period\'s GPU time and cost by deployment and GPU type, live; tokens from the audit records; the projection', async (t) => {
  const owner = await signupWithDeployment(api);
  const period = billingPeriod(new Date());
  // Two L4 replicas (80 cents per GPU-hour each) since 30 minutes ago, or since the period began.
  const since = Math.max(period.start.getTime() + 1_000, Date.now() - 30 * 60_000);
  await createStatusStore(api.orm).record({ deploymentId: owner.id, status: 'running', generation: 1, replicas: 2, at: since });
  await api.pool.query(
    `INSERT INTO audit_log (id, created_at, organization_id, action, resource_type, resource_id, user_id, ip_address, status_code, details)
     SELECT 'aud_usage' || i, now(), $1, 'deployment.infer', 'deployment', $2, $3, '127.0.0.1', 200, jsonb_build_object('completed', true, 'promptTokens', 10, 'completionTokens', 25)
     FROM generate_series(1, 4) i`, [owner.organizationId, owner.id, owner.userId]);
  const before = Date.now();
  const res = await api.request('GET', '/api/billing/usage', { token: owner.token });
  const after = Date.now();
  t.is(res.status, 200);
  t.true(res.body.success);
  const usage = res.body.data;
  t.deepEqual(usage.period, { start: period.start.toISOString(), end: period.end.toISOString() });
  t.is(usage.deployments.length, 1);
  const [row] = usage.deployments;
  t.like(row, { deploymentId: owner.id, name: 'llama-chat', gpu: 'nvidia-l4', rateCentsPerGpuHour: 80, requests: 4, promptTokens: 40, completionTokens: 100 });
  // 2 GPUs since `since`, measured at the request's own time.
  t.true(row.gpuHours >= (2 * (before - since)) / 3_600_000 && row.gpuHours <= (2 * (after - since)) / 3_600_000, String(row.gpuHours));
  t.is(row.costCents, Math.round(row.gpuHours * 80));
  t.deepEqual(usage.gpuTypes, [{ gpu: 'nvidia-l4', gpuHours: row.gpuHours, costCents: row.costCents }]);
  t.is(usage.totalCents, row.costCents);
  t.is(usage.drawnCents, 0, 'no interval closed yet');
  t.is(usage.projection.hourlyRateCents, 160);
  const remainingHours = (period.end.getTime() - Date.parse(usage.asOf)) / 3_600_000;
  t.true(Math.abs(usage.projection.periodEndCents - (row.gpuHours * 80 + 160 * remainingHours)) <= 1);
  t.is(usage.balanceCents, 2_500);

  // Stopped: the hourly rate is zero from then; what ran is still counted.
  await createStatusStore(api.orm).record({ deploymentId: owner.id, status: 'stopped', generation: 2, replicas: 0 });
  const stopped = (await api.request('GET', '/api/billing/usage', { token: owner.token })).body.data;
  t.is(stopped.projection.hourlyRateCents, 0);
  t.true(stopped.totalCents >= usage.totalCents);
  t.is(stopped.projection.periodEndCents, stopped.totalCents);

  // Another organization sees none of it; unknown parameters are 400.
  const other = await signup(api);
  t.deepEqual((await api.request('GET', '/api/billing/usage', { token: other.token })).body.data.deployments, []);
  const bad = await api.request('GET', '/api/billing/usage?from=yesterday', { token: owner.token });
  t.is(bad.status, 400);
  t.false(bad.body.success);
});
