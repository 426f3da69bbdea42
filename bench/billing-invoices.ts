// Invoicing time (part of `npm run bench:billing`): the monthly close of BENCH_INVOICE_ORGANIZATIONS
// organizations, each with a month of metered usage as metering writes it (an interval every
// BENCH_INVOICE_INTERVAL_HOURS hours, BENCH_INVOICE_DEPLOYMENTS deployments charged in each, a ledger debit per
// interval), issued by the activity the invoicing schedule runs (workflows/invoicing/activities.ts: per
// organization, in one transaction under its row lock, the lines from its usage charges, the credits its debits
// drew, the next number and the invoice), then each invoice rendered as its PDF (control-plane/invoices/pdf.ts).
// Baselines measured in the same run: the close of one organization of the same shape, and one PDF (median of
// BENCH_INVOICE_RUNS).
// Run: node bench/billing-invoices.ts
import { invoiceView } from '../control-plane/invoices/service.ts';
import { InvoiceSchema } from '../control-plane/invoices/invoice.entity.ts';
import { renderInvoicePdf } from '../control-plane/invoices/pdf.ts';
import { createInvoicingActivities } from '../workflows/invoicing/activities.ts';
import { invoicingStore } from '../workflows/invoicing/store.ts';
import { startBenchApi } from './support/bench-api.ts';

const ORGANIZATIONS = Number(process.env.BENCH_INVOICE_ORGANIZATIONS ?? 1_000);
const DEPLOYMENTS = Number(process.env.BENCH_INVOICE_DEPLOYMENTS ?? 3);
const INTERVAL_HOURS = Number(process.env.BENCH_INVOICE_INTERVAL_HOURS ?? 1);
const RUNS = Number(process.env.BENCH_INVOICE_RUNS ?? 5);

const api = await startBenchApi('invoices');
const activities = createInvoicingActivities({ store: invoicingStore(api.orm) });

/**
 * Organizations `prefix`0..n-1 (plans in turn free, startup, growth), each with `month`'s usage: an interval
 * every INTERVAL_HOURS, DEPLOYMENTS deployments of GPU types in turn charged 10 to 60 GPU-minutes in each, and
 * each interval's debit from a balance that runs out partway through the month.
 */
async function seed(prefix: string, organizations: number, month: string, plans: string[]): Promise<number> {
  const started = performance.now();
  await api.pool.query(
    `INSERT INTO organization (id, created_at, name, slug, default_region, plan, credits_cents, last_top_up_cents)
     SELECT $1 || lpad(i::text, 10, '0'), '2025-01-01', 'Bench organization ' || i, $1 || i, 'us-east-1', ($3::text[])[1 + i % cardinality($3::text[])], 0, 0
     FROM generate_series(0, $2 - 1) i`, [prefix, organizations, plans]);
  await api.pool.query(
    `INSERT INTO usage_interval (id, created_at, organization_id, starts_at, ends_at, usage_units, debit_cents)
     SELECT 'usi_' || $1 || i || '_' || h, now(), $1 || lpad(i::text, 10, '0'), s, s + make_interval(hours => $4::int), 0, 0
     FROM generate_series(0, $2 - 1) i,
          LATERAL (SELECT h, ($3 || 'T00:00:00Z')::timestamptz + make_interval(hours => h) AS s
                   FROM generate_series(0, (extract(epoch FROM ($3::date + interval '1 month') - $3::date) / 3600)::int - 1, $4::int) h) hours`,
    [prefix, organizations, `${month}-01`, INTERVAL_HOURS]);
  await api.pool.query(
    `INSERT INTO usage_charge (id, created_at, organization_id, interval_id, starts_at, deployment_id, deployment_name, gpu, gpu_ms, rate_cents_per_hour, usage_units)
     SELECT 'usc_' || u.id || '_' || d, now(), u.organization_id, u.id, u.starts_at, 'dep_' || u.organization_id || '_' || d, 'model-' || d,
            (ARRAY['nvidia-l4', 'nvidia-a10g', 'nvidia-h100-80gb'])[1 + d % 3], g.ms, (ARRAY[80, 100, 400])[1 + d % 3], g.ms * (ARRAY[80, 100, 400])[1 + d % 3]
     FROM usage_interval u, generate_series(0, $2 - 1) d,
          LATERAL (SELECT (600000 * (1 + ((hashtext(u.id || d::text) % 6) + 6) % 6))::bigint AS ms) g
     WHERE u.organization_id LIKE $1 || '%'`, [prefix, DEPLOYMENTS]);
  // The interval's usage, its whole cents drawn, and the ledger line: 20 dollars at the start, run out partway.
  await api.pool.query(
    `UPDATE usage_interval u SET usage_units = c.units, debit_cents = (c.units / 3600000)::int
     FROM (SELECT interval_id, sum(usage_units) AS units FROM usage_charge WHERE organization_id LIKE $1 || '%' GROUP BY interval_id) c
     WHERE c.interval_id = u.id`, [prefix]);
  await api.pool.query(
    `INSERT INTO credit_entry (id, created_at, organization_id, kind, amount_cents, balance_after_cents, description, reference)
     SELECT 'cre_' || id, now(), organization_id, 'debit', -debit_cents,
            2000 - sum(debit_cents) OVER (PARTITION BY organization_id ORDER BY starts_at), 'GPU usage', 'usage:' || id
     FROM usage_interval WHERE organization_id LIKE $1 || '%'`, [prefix]);
  const n = (await api.pool.query<{ n: string }>(`SELECT count(*) AS n FROM usage_charge WHERE organization_id LIKE $1 || '%'`, [prefix])).rows[0]!.n;
  await api.pool.query('ANALYZE');
  console.log(`  seeded ${organizations} organization(s) with ${Number(n).toLocaleString('en-US')} usage charges for ${month} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return Number(n);
}

async function close(month: string): Promise<{ ms: number; issued: number }> {
  const started = performance.now();
  const result = await activities.issueInvoices({ month });
  return { ms: performance.now() - started, issued: result.issued };
}

async function render(organizationPrefix: string): Promise<{ ms: number[]; bytes: number }> {
  const em = api.orm.em.fork();
  const invoices = await em.find(InvoiceSchema, { organizationId: { $like: `${organizationPrefix}%` } }, { orderBy: { organizationId: 'asc' } });
  const names = new Map((await api.pool.query<{ id: string; name: string }>(`SELECT id, name FROM organization WHERE id LIKE $1 || '%'`, [organizationPrefix])).rows.map((r) => [r.id, r.name]));
  const ms: number[] = [];
  let bytes = 0;
  for (const invoice of invoices) {
    const started = performance.now();
    const pdf = await renderInvoicePdf({ invoice: invoiceView(invoice), organizationName: names.get(invoice.organizationId)! });
    ms.push(performance.now() - started);
    bytes += pdf.length;
  }
  return { ms, bytes };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

try {
  console.log(`invoicing: ${ORGANIZATIONS} organizations, ${DEPLOYMENTS} deployments each, an interval every ${INTERVAL_HOURS} h`);
  // The baseline first, alone in its month: one organization of the same shape (on growth, as a third of the many are).
  await seed('org_benchinvone', 1, '2026-08', ['growth']);
  // Warm-up: July (its plan fee alone), so the baseline is not the first statement of each kind.
  await close('2026-07');
  const baseline = await close('2026-08');
  // Free from then on: the many's month owes it nothing.
  await api.pool.query(`UPDATE organization SET plan = 'free' WHERE id LIKE 'org_benchinvone%'`);
  // Its PDF, warmed up once (the first loads pdfkit's font metrics), then the median of RUNS.
  await render('org_benchinvone');
  const onePdf: number[] = [];
  for (let run = 0; run < RUNS; run++) onePdf.push(...(await render('org_benchinvone')).ms);

  const charges = await seed('org_benchinvall', ORGANIZATIONS, '2026-09', ['free', 'startup', 'growth']);
  const many = await close('2026-09');
  const again = await close('2026-09');
  const pdfs = await render('org_benchinvall');
  const { rows: [totals] } = await api.pool.query<{ n: string; total: string; credits: string }>(
    `SELECT count(*) AS n, sum(total_cents) AS total, sum(credits_applied_cents) AS credits FROM invoice WHERE organization_id LIKE 'org_benchinvall%'`);

  console.log('closing a month (the activity the invoicing schedule runs):');
  console.log(`  baseline: 1 organization, ${DEPLOYMENTS} deployments: ${baseline.ms.toFixed(1)} ms (${baseline.issued} invoice)`);
  console.log(`  ${ORGANIZATIONS} organizations, ${charges.toLocaleString('en-US')} usage charges: ${many.ms.toFixed(0)} ms for ${many.issued} invoices`
    + ` (${(many.ms / many.issued).toFixed(2)} ms an invoice, ${(many.ms / baseline.ms).toFixed(0)}x the baseline); ${totals!.n} issued, $${(Number(totals!.total) / 100).toLocaleString('en-US')} billed, $${(Number(totals!.credits) / 100).toLocaleString('en-US')} of credits applied`);
  console.log(`  the same month closed again: ${again.ms.toFixed(0)} ms, ${again.issued} issued`);
  console.log('rendering invoice PDFs:');
  console.log(`  baseline: one PDF, median of ${RUNS}: ${median(onePdf).toFixed(1)} ms`);
  console.log(`  ${pdfs.ms.length} PDFs one after another: ${(sum(pdfs.ms) / 1000).toFixed(2)} s (median ${median(pdfs.ms).toFixed(1)} ms, slowest ${Math.max(...pdfs.ms).toFixed(1)} ms,`
    + ` ${(sum(pdfs.ms) / pdfs.ms.length / median(onePdf)).toFixed(1)}x the baseline each on average); ${(pdfs.bytes / pdfs.ms.length / 1024).toFixed(1)} KiB a PDF`);
} finally {
  await api.close();
}
