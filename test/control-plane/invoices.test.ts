// Monthly invoices on a real database: usage charges, intervals and their ledger debits seeded as metering writes
// them, invoices issued by the invoicing activity (and by its workflow on a worker). Lines, plan fee, credits
// applied and total exact to the cent; numbers 1, 2, 3 per organization, each period invoiced once however often
// or concurrently it is closed; the database refuses to change or delete an issued invoice; the plan change due
// by the period's end applied with it. Then the routes: the list in cursor pages on both surfaces, the PDF
// (rendered by poppler's pdftoppm and read back by pdftotext), and every refusal.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { INVOICING_WORKFLOW, monthPeriod, previousMonth } from '../../workflows/contract/invoicing.ts';
import { createInvoicingActivities } from '../../workflows/invoicing/activities.ts';
import { invoicingQueue } from '../../workflows/invoicing/queue.ts';
import { invoicingStore } from '../../workflows/invoicing/store.ts';
import { createQueueWorker } from '../../workflows/queue.ts';
import { ensureSchedule } from '../../workflows/schedules.ts';
import { addMember, createApiKey, signup, startTestApi, type TestApi } from '../support/control-plane.ts';
import { testBundleDir, testTemporalAddress } from '../support/temporal.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';

installTestRuntime();
// Serial: a close invoices every organization owing one for its month, so each test's organizations must not
// meet another test's closes while it counts their invoices.
const run = promisify(execFile);

let api: TestApi;
test.before(async () => { api = await startTestApi(import.meta.filename); });
test.after.always(() => api?.close());

const HOUR = 3_600_000;
const issue = (month: string, force = false) => createInvoicingActivities({ store: invoicingStore(api.orm) }).issueInvoices({ month, force });

interface Charge { deploymentId: string; name: string; gpu: string; rate: number; gpuMs: number }
let seq = 0;

/** An organization that has existed since before the months the tests invoice, on `plan`. */
async function organization(plan = 'free') {
  const owner = await signup(api, 'billing');
  await api.pool.query(`UPDATE organization SET created_at = '2025-01-01', plan = $2 WHERE id = $1`, [owner.organizationId, plan]);
  return owner;
}

/**
 * One closed metering interval as metering writes it: its charges and, when `debit` is given, the ledger debit
 * with the balance after it.
 */
async function interval(organizationId: string, startsAt: string, charges: Charge[], debit?: { cents: number; balanceAfter: number }) {
  seq += 1;
  const id = `usi_test${String(seq).padStart(16, '0')}`;
  const units = charges.reduce((sum, c) => sum + c.gpuMs * c.rate, 0);
  await api.pool.query(`INSERT INTO usage_interval (id, created_at, organization_id, starts_at, ends_at, usage_units, debit_cents) VALUES ($1, now(), $2, $3, $3::timestamptz + interval '1 hour', $4, $5)`,
    [id, organizationId, startsAt, units, debit?.cents ?? 0]);
  for (const [i, c] of charges.entries()) {
    await api.pool.query(`INSERT INTO usage_charge (id, created_at, organization_id, interval_id, starts_at, deployment_id, deployment_name, gpu, gpu_ms, rate_cents_per_hour, usage_units)
      VALUES ($1, now(), $2, $3, $4, $5, $6, $7, $8, $9, $10)`, [`usc_${id.slice(4)}${i}`, organizationId, id, startsAt, c.deploymentId, c.name, c.gpu, c.gpuMs, c.rate, c.gpuMs * c.rate]);
  }
  if (debit) {
    await api.pool.query(`INSERT INTO credit_entry (id, created_at, organization_id, kind, amount_cents, balance_after_cents, description, reference) VALUES ($1, now(), $2, 'debit', $3, $4, 'GPU usage', $5)`,
      [`cre_${id.slice(4)}`, organizationId, -debit.cents, debit.balanceAfter, `usage:${id}`]);
  }
  return id;
}

const chat = (gpuMs: number, name = 'chat'): Charge => ({ deploymentId: 'dep_chat0000000000000000', name, gpu: 'nvidia-l4', rate: 80, gpuMs });
const embed = (gpuMs: number): Charge => ({ deploymentId: 'dep_embed000000000000000', name: 'embed', gpu: 'nvidia-a100-80gb', rate: 250, gpuMs });

async function invoices(organizationId: string) {
  const { rows } = await api.pool.query('SELECT * FROM invoice WHERE organization_id = $1 ORDER BY number', [organizationId]);
  return rows;
}

test.serial('an invoice\'s lines, plan fee, credits applied and total, exact to the cent', async (t) => {
  const owner = await organization('startup');
  // September 2026: chat on L4 at 80 cents per GPU-hour (renamed chat-v2 later in the month), embed on A100 at 250.
  await interval(owner.organizationId, '2026-09-03T10:00:00Z', [chat(2 * HOUR), embed(HOUR / 2)], { cents: 285, balanceAfter: 2_215 });
  // A debit larger than what was left: 10 cents of it came from credits.
  await interval(owner.organizationId, '2026-09-20T15:00:00Z', [chat(1_234_567, 'chat-v2')], { cents: 30, balanceAfter: -20 });
  // Drawn while the balance was already below zero: nothing from credits.
  await interval(owner.organizationId, '2026-09-30T23:00:00Z', [embed(72_000)], { cents: 5, balanceAfter: -25 });
  // Outside September: on no September invoice.
  await interval(owner.organizationId, '2026-08-31T23:00:00Z', [chat(HOUR)], { cents: 80, balanceAfter: 2_500 });
  await interval(owner.organizationId, '2026-10-01T00:00:00Z', [chat(HOUR)], { cents: 80, balanceAfter: -105 });

  const result = await issue('2026-09');
  t.like(result, { month: '2026-09', waiting: 0 });
  t.true(result.issued >= 1);
  const [invoice, ...more] = await invoices(owner.organizationId);
  t.is(more.length, 0);
  t.like(invoice, {
    number: 1, plan: 'startup', currency: 'usd',
    period_start: new Date('2026-09-01T00:00:00Z'), period_end: new Date('2026-10-01T00:00:00Z'),
    // chat: (7,200,000 + 1,234,567) ms x 80 = 674,765,360 units = 187.43 cents -> 187; embed: 1,872,000 ms x 250 = 130 cents.
    plan_fee_cents: 4_900, usage_cents: 317, credits_applied_cents: 285 + 10 + 0, total_cents: 4_900 + 317 - 295,
  });
  t.deepEqual(invoice.lines, [
    { deploymentId: 'dep_chat0000000000000000', deploymentName: 'chat-v2', gpu: 'nvidia-l4', gpuMs: 8_434_567, rateCentsPerHour: 80, usageUnits: 674_765_360, amountCents: 187 },
    { deploymentId: 'dep_embed000000000000000', deploymentName: 'embed', gpu: 'nvidia-a100-80gb', gpuMs: 1_872_000, rateCentsPerHour: 250, usageUnits: 468_000_000, amountCents: 130 },
  ]);

  const listed = await api.request('GET', `/v1/billing/invoices?orgId=${owner.organizationId}`, { token: owner.token });
  t.is(listed.status, 200);
  t.deepEqual(listed.body.pagination, { hasMore: false, nextCursor: null });
  t.like(listed.body.data[0], {
    id: invoice.id, sequence: 1, number: `KILN-${owner.organizationId.slice(4).toUpperCase()}-0001`, organizationId: owner.organizationId,
    periodStart: '2026-09-01T00:00:00.000Z', periodEnd: '2026-10-01T00:00:00.000Z', plan: 'startup',
    planFeeCents: 4_900, usageCents: 317, creditsAppliedCents: 295, totalCents: 4_922, currency: 'usd',
  });
  t.like(listed.body.data[0].lines[0], { deploymentName: 'chat-v2', gpu: 'nvidia-l4', gpuMs: 8_434_567, gpuHours: 2.343, rateCentsPerGpuHour: 80, amountCents: 187 });
  t.is(listed.body.data[0].lines[1].gpuHours, 0.52);
});

test.serial('credits cover more than the usage: the total is never below zero; a free organization without usage gets no invoice', async (t) => {
  const covered = await organization('free');
  await interval(covered.organizationId, '2026-05-10T00:00:00Z', [chat(HOUR)], { cents: 80, balanceAfter: 100 });
  const idle = await organization('free');
  await issue('2026-05');
  t.like((await invoices(covered.organizationId))[0], { plan_fee_cents: 0, usage_cents: 80, credits_applied_cents: 80, total_cents: 0 });
  t.deepEqual(await invoices(idle.organizationId), []);
});

test.serial('numbers run 1, 2, 3 per organization, independently; a period is invoiced once however often or concurrently it is closed', async (t) => {
  const [x, y] = [await organization('free'), await organization('growth')];
  for (const month of ['2026-01', '2026-02', '2026-03']) await interval(x.organizationId, `${month}-15T12:00:00Z`, [chat(HOUR)]);
  // y pays its plan each month; it used GPUs in February only.
  await interval(y.organizationId, '2026-02-01T00:00:00Z', [embed(HOUR)]);

  await issue('2026-01');
  // Two closes of February at once (an overlapping run, a retried activity): one invoice each.
  const [first, second] = await Promise.all([issue('2026-02'), issue('2026-02')]);
  t.true(first.issued >= 2 || second.issued >= 2 || first.issued + second.issued >= 2);
  await issue('2026-03');
  const again = await issue('2026-02');
  t.like(again, { issued: 0 });

  const xs = await invoices(x.organizationId);
  t.deepEqual(xs.map((i) => [i.number, i.period_start.toISOString().slice(0, 7), i.total_cents]), [[1, '2026-01', 80], [2, '2026-02', 80], [3, '2026-03', 80]]);
  const ys = await invoices(y.organizationId);
  t.deepEqual(ys.map((i) => [i.number, i.period_start.toISOString().slice(0, 7), i.plan_fee_cents, i.usage_cents, i.total_cents]),
    [[1, '2026-01', 49_900, 0, 49_900], [2, '2026-02', 49_900, 250, 50_150], [3, '2026-03', 49_900, 0, 49_900]]);
  const { rows: [{ n }] } = await api.pool.query(`SELECT count(*)::int AS n FROM invoice WHERE organization_id IN ($1, $2)`, [x.organizationId, y.organizationId]);
  t.is(n, 6);
  // Each issued invoice told the owner once, in the app, with its printed number.
  const told = (await api.request('GET', `/v1/notifications?orgId=${y.organizationId}&kind=invoice.issued`, { token: y.token })).body.data;
  t.deepEqual(told.map((i: { data: { sequence: number } }) => i.data.sequence).sort(), [1, 2, 3]);
  t.like(told.find((i: { data: { sequence: number } }) => i.data.sequence === 2), {
    title: 'Your monthly invoice is issued', message: 'Your invoice for 2026-02 is issued: 501.50 USD.',
    data: { number: `KILN-${y.organizationId.slice(4).toUpperCase()}-0002`, totalCents: 50_150, currency: 'usd' },
  });
});

test.serial('a pass that fails partway is taken up by its retry: nothing issued twice, no number skipped', async (t) => {
  const orgs = [await organization('startup'), await organization('startup'), await organization('startup')];
  const store = invoicingStore(api.orm);
  let calls = 0;
  const failing: typeof store = {
    ...store,
    issue: async (...args) => {
      calls += 1;
      if (calls === 2) throw new Error('worker lost');
      return store.issue(...args);
    },
  };
  await t.throwsAsync(createInvoicingActivities({ store: failing, concurrency: 1 }).issueInvoices({ month: '2025-03' }), { message: 'worker lost' });
  await issue('2025-03');
  await issue('2025-03');
  await issue('2025-04');
  for (const owner of orgs) {
    t.deepEqual((await invoices(owner.organizationId)).map((i) => [i.number, i.period_start.toISOString().slice(0, 7)]), [[1, '2025-03'], [2, '2025-04']]);
  }
});

test.serial('an issued invoice is never changed or deleted: the database refuses, whoever asks', async (t) => {
  const owner = await organization('startup');
  await issue('2026-04');
  const [invoice] = await invoices(owner.organizationId);
  await t.throwsAsync(api.pool.query('UPDATE invoice SET total_cents = 0 WHERE id = $1', [invoice.id]), { message: /never changed or deleted \(UPDATE refused\)/ });
  await t.throwsAsync(api.pool.query('DELETE FROM invoice WHERE id = $1', [invoice.id]), { message: /never changed or deleted \(DELETE refused\)/ });
  await t.throwsAsync(api.pool.query('TRUNCATE invoice'), { message: /TRUNCATE refused/ });
  t.like((await invoices(owner.organizationId))[0], { id: invoice.id, total_cents: 4_900 });
});

test.serial('a downgrade due by the period\'s end: the month is invoiced at the plan it had, then the plan changes', async (t) => {
  const owner = await organization('growth');
  const other = await organization('startup');
  // Due at the end of June; another due at the end of July stays pending.
  await api.pool.query(`UPDATE organization SET pending_plan = 'startup', pending_plan_at = '2026-07-01T00:00:00Z' WHERE id = $1`, [owner.organizationId]);
  await api.pool.query(`UPDATE organization SET pending_plan = 'free', pending_plan_at = '2026-08-01T00:00:00Z' WHERE id = $1`, [other.organizationId]);
  await issue('2026-06');
  t.like((await invoices(owner.organizationId))[0], { plan: 'growth', plan_fee_cents: 49_900 });
  const plans = async (id: string) => (await api.pool.query('SELECT plan, pending_plan, pending_plan_at FROM organization WHERE id = $1', [id])).rows[0];
  t.deepEqual(await plans(owner.organizationId), { plan: 'startup', pending_plan: null, pending_plan_at: null });
  t.like(await plans(other.organizationId), { plan: 'startup', pending_plan: 'free' });
  await issue('2026-07');
  t.like((await invoices(owner.organizationId))[1], { number: 2, plan: 'startup', plan_fee_cents: 4_900 });
  t.like((await invoices(other.organizationId))[1], { number: 2, plan: 'startup', plan_fee_cents: 4_900 });
  t.like(await plans(other.organizationId), { plan: 'free', pending_plan: null });
});

test.serial('an organization whose metering has not closed the whole month waits for a later pass (or one that forces)', async (t) => {
  const owner = await organization('free');
  await interval(owner.organizationId, '2026-03-31T22:00:00Z', [chat(HOUR)]);
  // Replicas ran in March and metering has closed up to 23:00 only.
  await api.pool.query(`INSERT INTO replica_record (id, created_at, organization_id, deployment_id, status, replicas, gpu, gpus_per_replica, observed_at)
    VALUES ('rep_invoicewait000000000', now(), $1, 'dep_chat0000000000000000', 'running', 1, 'nvidia-l4', 1, '2026-03-31T22:00:00Z')`, [owner.organizationId]);
  await api.pool.query(`UPDATE organization SET metered_until = '2026-03-31T23:00:00Z' WHERE id = $1`, [owner.organizationId]);
  const waiting = await issue('2026-03');
  t.true(waiting.waiting >= 1);
  t.deepEqual(await invoices(owner.organizationId), []);
  await api.pool.query(`UPDATE organization SET metered_until = '2026-04-01T01:00:00Z' WHERE id = $1`, [owner.organizationId]);
  await issue('2026-03');
  t.like((await invoices(owner.organizationId))[0], { number: 1, usage_cents: 80 });
  // A month that has not ended is never invoiced.
  await t.throwsAsync(issue('2099-01'), { message: /has not ended/ });
  await t.throwsAsync(issue('2026-13'), { message: /YYYY-MM/ });
});

test.serial('GET /v1/billing/invoices and /api/billing/invoices: newest first, in cursor pages', async (t) => {
  const owner = await organization('free');
  for (const month of ['2025-10', '2025-11', '2025-12']) {
    await interval(owner.organizationId, `${month}-02T00:00:00Z`, [chat(HOUR)]);
    await issue(month);
  }
  const seen: number[] = [];
  let cursor: string | null = null;
  do {
    const page = await api.request('GET', `/v1/billing/invoices?orgId=${owner.organizationId}&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: owner.token });
    t.is(page.status, 200);
    t.is(page.body.data.length, 1);
    seen.push(page.body.data[0].sequence);
    cursor = page.body.pagination.nextCursor;
    t.is(page.body.pagination.hasMore, cursor !== null);
  } while (cursor);
  t.deepEqual(seen, [3, 2, 1]);

  const platform = await api.request('GET', '/api/billing/invoices?limit=2', { token: owner.token });
  t.is(platform.status, 200);
  t.true(platform.body.success);
  t.deepEqual(platform.body.data.map((i: { sequence: number }) => i.sequence), [3, 2]);
  t.true(platform.body.pagination.hasMore);
  const rest = await api.request('GET', `/api/billing/invoices?limit=2&cursor=${encodeURIComponent(platform.body.pagination.nextCursor)}`, { token: owner.token });
  t.deepEqual(rest.body.data.map((i: { sequence: number }) => i.sequence), [1]);
  t.deepEqual(rest.body.pagination, { hasMore: false, nextCursor: null });
});

test.serial('GET /v1/billing/invoices/{id}/download: a PDF that poppler renders, with the invoice on it', async (t) => {
  const owner = await organization('startup');
  await interval(owner.organizationId, '2026-08-05T00:00:00Z', [chat(1_234_567, 'chat-v2'), embed(HOUR / 2)], { cents: 152, balanceAfter: 2_348 });
  await issue('2026-08');
  const [invoice] = await invoices(owner.organizationId);
  const number = `KILN-${owner.organizationId.slice(4).toUpperCase()}-0001`;

  const res = await fetch(`${api.url}/v1/billing/invoices/${invoice.id}/download?orgId=${owner.organizationId}`, { headers: { authorization: `Bearer ${owner.token}` } });
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'application/pdf');
  t.is(res.headers.get('content-disposition'), `attachment; filename="${number}.pdf"`);
  const pdf = Buffer.from(await res.arrayBuffer());
  t.is(pdf.subarray(0, 5).toString(), '%PDF-');

  const dir = await mkdtemp(join(tmpdir(), 'kiln-invoice-'));
  const file = join(dir, `${number}.pdf`);
  await writeFile(file, pdf);
  await run('pdftoppm', ['-png', '-r', '50', '-f', '1', '-l', '1', file, join(dir, 'page')]);
  const pngs = (await readdir(dir)).filter((name) => name.startsWith('page') && name.endsWith('.png'));
  t.is(pngs.length, 1);
  t.true((await stat(join(dir, pngs[0]!))).size > 1_000);

  const { stdout: text } = await run('pdftotext', ['-layout', file, '-']);
  const organizationName = (await api.pool.query('SELECT name FROM organization WHERE id = $1', [owner.organizationId])).rows[0].name as string;
  for (const expected of ['Kiln', number, organizationName, '2026-08-01 to 2026-08-31', 'chat-v2', 'nvidia-l4', '0.343', '$0.80', '$0.27', 'embed', '0.500', '$2.50', '$1.25', '$49.00', '-$1.52', '$49.00']) {
    t.true(text.includes(expected), `${expected} on the PDF`);
  }
  // 27 + 125 cents of usage, 152 applied: the total is the plan fee.
  t.regex(text, /Total \(USD\)\s+\$49\.00/);
});

test.serial('the invoice routes: bad input 400 naming it; no credential 401; read-only and deployments-only keys, members and viewers 403; another organization 403 or 404', async (t) => {
  const owner = await organization('startup');
  const other = await organization('startup');
  await issue('2026-10');
  const [mine] = await invoices(owner.organizationId);
  const [theirs] = await invoices(other.organizationId);
  const list = (query: string, options: Parameters<TestApi['request']>[2] = { token: owner.token }) => api.request('GET', `/v1/billing/invoices${query}`, options);
  const download = (id: string, orgId: string, options: Parameters<TestApi['request']>[2] = { token: owner.token }) => api.request('GET', `/v1/billing/invoices/${id}/download?orgId=${orgId}`, options);

  for (const [query, parameter] of [['', 'orgId'], [`?orgId=${owner.organizationId}&limit=0`, 'limit'], [`?orgId=${owner.organizationId}&limit=x`, 'limit'],
    [`?orgId=${owner.organizationId}&cursor=forged`, 'cursor'], [`?orgId=${owner.organizationId}&year=2026`, 'year']] as const) {
    const res = await list(query);
    t.is(res.status, 400, query);
    t.regex(JSON.stringify(res.body), new RegExp(parameter), query);
  }
  const platformBad = await api.request('GET', '/api/billing/invoices?limit=101', { token: owner.token });
  t.is(platformBad.status, 400);
  t.false(platformBad.body.success);
  t.regex(JSON.stringify(platformBad.body.error), /limit/);
  const longId = await download(`ivc_${'x'.repeat(70)}`, owner.organizationId);
  t.is(longId.status, 400);
  t.regex(longId.body.message, /id/);
  const noOrg = await api.request('GET', `/v1/billing/invoices/${mine.id}/download`, { token: owner.token });
  t.is(noOrg.status, 400);
  t.regex(noOrg.body.message, /orgId/);

  t.is((await list(`?orgId=${owner.organizationId}`, {})).status, 401);
  t.is((await api.request('GET', '/api/billing/invoices')).status, 401);
  t.is((await download(mine.id, owner.organizationId, {})).status, 401);

  for (const scope of ['read_only', 'deployments_only'] as const) {
    const { key } = await createApiKey(api, owner.token, scope);
    t.is((await list(`?orgId=${owner.organizationId}`, { token: key })).status, 403, scope);
    t.is((await api.request('GET', '/api/billing/invoices', { token: key })).status, 403, scope);
    t.is((await download(mine.id, owner.organizationId, { token: key })).status, 403, scope);
  }
  const { key: fullKey } = await createApiKey(api, owner.token, 'full_access');
  t.is((await list(`?orgId=${owner.organizationId}`, { token: fullKey })).status, 200);
  t.is((await download(mine.id, owner.organizationId, { token: fullKey })).status, 200);
  for (const role of ['member', 'viewer']) {
    const user = await addMember(api, owner.organizationId, role);
    t.is((await list(`?orgId=${owner.organizationId}`, { token: user.token })).status, 403, role);
    t.is((await api.request('GET', '/api/billing/invoices', user.as)).status, 403, role);
    t.is((await download(mine.id, owner.organizationId, { token: user.token })).status, 403, role);
  }
  const admin = await addMember(api, owner.organizationId, 'admin');
  t.is((await list(`?orgId=${owner.organizationId}`, { token: admin.token })).status, 200);
  t.deepEqual((await api.request('GET', '/api/billing/invoices', admin.as)).body.data.map((i: { id: string }) => i.id), [mine.id]);

  // Another organization's orgId: 403. Another organization's invoice, asked in one's own: 404, and never listed.
  t.is((await list(`?orgId=${other.organizationId}`)).status, 403);
  t.is((await download(theirs.id, other.organizationId)).status, 403);
  const notMine = await download(theirs.id, owner.organizationId);
  t.is(notMine.status, 404);
  t.is(notMine.body.code, 'NOT_FOUND');
  t.is((await download('ivc_doesnotexist0000000', owner.organizationId)).status, 404);
  const listed = await list(`?orgId=${owner.organizationId}`);
  t.deepEqual(listed.body.data.map((i: { id: string }) => i.id), [mine.id]);
});

test.serial('the invoicing workflow closes the month before it started on a worker; the schedule is made idempotently', async (t) => {
  t.timeout(120_000);
  const month = previousMonth(new Date());
  const owner = await organization('free');
  await interval(owner.organizationId, monthPeriod(month).start.toISOString(), [chat(HOUR)]);
  const taskQueue = `invoicing-${Date.now()}`;
  const client = new Client({ connection: await Connection.connect({ address: testTemporalAddress() }) });
  const worker = await createQueueWorker(invoicingQueue, {
    connection: await NativeConnection.connect({ address: testTemporalAddress() }), bundleDir: testBundleDir(), taskQueue,
    activities: invoicingQueue.activities({ orm: api.orm }),
  });
  const scheduleId = `test-invoicing-${Date.now()}`;
  try {
    await worker.runUntil(async () => {
      // As the schedule starts it: no month given.
      const result = await client.workflow.execute(INVOICING_WORKFLOW, { taskQueue, workflowId: `invoicing-${Date.now()}`, args: [] });
      t.like(result, { month, waiting: 0 });
      // A past month given by hand, run twice: issued once.
      await interval(owner.organizationId, '2025-06-10T00:00:00Z', [chat(HOUR)]);
      for (let i = 0; i < 2; i++) await client.workflow.execute(INVOICING_WORKFLOW, { taskQueue, workflowId: `invoicing-june-${i}-${Date.now()}`, args: [{ month: '2025-06' }] });
      const schedule = { scheduleId, spec: { cronExpressions: ['0 0 1 * *'] }, catchupWindow: '7 days', action: { type: 'startWorkflow' as const, workflowType: INVOICING_WORKFLOW, taskQueue, args: [] } };
      await ensureSchedule(client, schedule);
      await ensureSchedule(client, schedule);
      const description = await client.schedule.getHandle(scheduleId).describe();
      t.true(description.info.nextActionTimes.every((at) => at.getUTCDate() === 1 && at.getUTCHours() === 0 && at.getUTCMinutes() === 0));
    });
  } finally {
    await client.schedule.getHandle(scheduleId).delete().catch(() => undefined);
    await client.connection.close();
  }
  const issued = await invoices(owner.organizationId);
  t.deepEqual(issued.map((i) => [i.number, i.period_start.toISOString().slice(0, 7)]), [[1, month], [2, '2025-06']]);
});
