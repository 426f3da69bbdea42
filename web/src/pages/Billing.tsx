// Billing: this month's usage and projection, the credits balance and its ledger, invoices (each PDF fetched
// with the session and offered as a download), the plan (changed through checkout for a dearer one), and
// buying credits (checkout). Only owners and admins see billing; others are told so.
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, currentOrgId, KilnError, ok, type Schemas } from '../api.ts';
import { myOrganization } from '../profile.ts';
import { useMyRole } from '../permissions.ts';
import {
  ConfirmDialog, DataTable, EmptyState, ErrorBanner, Field, LoadingBlock, PageHeader, saveFile, Stat, SubmitButton, useApi, useSubmit, useToast, type Column,
} from '../ui/index.ts';
import { planLabel } from './Settings.tsx';

type Plan = Schemas['OrganizationSettings']['plan'];
type Invoice = Schemas['Invoice'];
type CreditEntry = Schemas['CreditEntry'];
type UsageRow = Schemas['Usage']['deployments'][number];

/** The plans and their monthly fees (catalog/plans.ts PLAN_TERMS); the API prices checkout itself. */
const PLANS: readonly { value: Plan; fee: string; what: string }[] = [
  { value: 'free', fee: '$0', what: '60 requests a minute; pay for GPU time with credits.' },
  { value: 'startup', fee: '$49 a month', what: '600 requests a minute.' },
  { value: 'growth', fee: '$499 a month', what: '6,000 requests a minute.' },
  { value: 'enterprise', fee: '$2,499 a month', what: '60,000 requests a minute and a contract of your own.' },
];
const PLAN_ORDER: readonly Plan[] = PLANS.map((p) => p.value);

export const money = (cents: number, currency = 'usd') => new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100);
const day = (iso: string) => new Date(iso).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const month = (iso: string) => new Date(iso).toLocaleDateString(undefined, { year: 'numeric', month: 'long', timeZone: 'UTC' });

/** Fetches the invoice's PDF with the session's bearer and hands it to the browser as a file. */
async function downloadInvoice(invoice: Invoice): Promise<void> {
  const blob = await ok(api.GET('/v1/billing/invoices/{id}/download', {
    params: { path: { id: invoice.id }, query: { orgId: currentOrgId() } },
    parseAs: 'blob',
  }));
  saveFile(blob, `${invoice.number}.pdf`);
}

export default function Billing() {
  const me = useMyRole();
  if (me.loading) return (<><PageHeader title="Billing" /><LoadingBlock lines={6} label="Loading billing" /></>);
  if (!me.can('billing:read')) {
    return (
      <>
        <PageHeader title="Billing" description="Usage, credits, invoices and the plan." />
        <p className="banner banner-info" data-testid="billing-not-allowed">
          Billing is open to owners and admins only: your role ({me.role}) does not include it. Ask an owner or admin for usage, invoices or credits.
        </p>
      </>
    );
  }
  return <BillingPages />;
}

function BillingPages() {
  const toast = useToast();
  const [params] = useSearchParams();
  const query = { orgId: currentOrgId() };
  const usage = useApi(async () => (await ok(api.GET('/api/billing/usage'))).data, []);
  const credits = useApi(() => ok(api.GET('/v1/credits', { params: { query: { ...query, limit: 20 } } })), []);
  const invoices = useApi(async () => (await ok(api.GET('/v1/billing/invoices', { params: { query } }))).data, []);
  const organization = useApi(() => myOrganization.get(), []);
  const [planChoice, setPlanChoice] = useState<Plan>();
  const [downloadError, setDownloadError] = useState<unknown>();
  const { busy: buying, error: buyError, fields, onSubmit } = useSubmit();

  const buy = onSubmit(async (form) => {
    const dollars = Number(form.get('amount'));
    // The API names the field amountCents; the form asks for dollars.
    const checkout = await ok(api.POST('/v1/payprovider/checkout', { body: { kind: 'credits', amountCents: Math.round(dollars * 100) } }));
    window.location.assign(checkout.url);
    return 'leaving';
  });

  const usageColumns: Column<UsageRow>[] = [
    { header: 'Deployment', cell: (d) => <strong>{d.name}</strong> },
    { header: 'GPU', cell: (d) => d.gpu },
    { header: 'GPU-hours', numeric: true, cell: (d) => d.gpuHours.toFixed(2) },
    { header: 'Requests', numeric: true, cell: (d) => d.requests.toLocaleString() },
    { header: 'Cost', numeric: true, cell: (d) => money(d.costCents) },
  ];
  const creditColumns: Column<CreditEntry>[] = [
    { header: 'Date', cell: (e) => day(e.createdAt) },
    { header: 'What', cell: (e) => e.description },
    { header: 'Amount', numeric: true, cell: (e) => <span className={e.amountCents < 0 ? undefined : 'positive'}>{e.amountCents > 0 ? '+' : ''}{money(e.amountCents)}</span> },
    { header: 'Balance', numeric: true, cell: (e) => money(e.balanceAfterCents) },
  ];
  const invoiceColumns: Column<Invoice>[] = [
    { header: 'Invoice', cell: (i) => <strong>{i.number}</strong> },
    { header: 'Period', cell: (i) => month(i.periodStart) },
    { header: 'Plan', cell: (i) => planLabel(i.plan) },
    { header: 'Total', numeric: true, cell: (i) => money(i.totalCents, i.currency) },
    {
      header: 'PDF',
      cell: (i) => (
        <button
          type="button"
          className="button"
          aria-label={`Download ${i.number} as PDF`}
          onClick={() => {
            setDownloadError(undefined);
            downloadInvoice(i).catch(setDownloadError);
          }}
        >
          Download
        </button>
      ),
    },
  ];

  const currentPlan = organization.data?.plan;
  const returned = params.get('checkout');
  const paymentsOff = buyError instanceof KilnError && buyError.code === 'PAYMENTS_UNAVAILABLE';

  return (
    <>
      <PageHeader title="Billing" description="What your deployments cost this month, your credits, invoices and plan." />
      {returned === 'success' && <p className="banner banner-success" role="status">Payment received: credits or the new plan appear here once the payment provider confirms it.</p>}
      {returned === 'cancelled' && <p className="banner banner-info" role="status">Checkout cancelled: nothing was charged.</p>}

      <section className="card" aria-labelledby="usage-title">
        <h2 id="usage-title">This month</h2>
        <ErrorBanner error={usage.error} onRetry={usage.reload} />
        <div className="stats">
          <Stat label="Usage so far" value={usage.data && money(usage.data.totalCents)} hint={usage.data && `${day(usage.data.period.start)} to ${day(usage.data.period.end)}`} />
          <Stat label="Projected for the month" value={usage.data && money(usage.data.projection.periodEndCents)} hint={usage.data && `${money(usage.data.projection.hourlyRateCents)} an hour now`} />
          <Stat label="Credits balance" value={credits.data && money(credits.data.balanceCents)} hint={credits.data?.exhaustedAt ? 'Run out: add credits to deploy again' : undefined} />
        </div>
        {!usage.error && (
          <DataTable
            caption="Usage by deployment this month"
            columns={usageColumns}
            rows={usage.data?.deployments}
            rowKey={(d) => `${d.deploymentId}-${d.gpu}`}
            empty={<EmptyState title="No GPU time this month">Deployments that run show their GPU-hours and cost here.</EmptyState>}
          />
        )}
      </section>

      <section className="card" aria-labelledby="plan-title">
        <h2 id="plan-title">Plan</h2>
        <ErrorBanner error={organization.error} onRetry={organization.reload} />
        {!currentPlan && !organization.error && <LoadingBlock lines={2} label="Loading the plan" />}
        {currentPlan && (
          <ul className="plans" aria-label="Plans">
            {PLANS.map((p) => (
              <li key={p.value} className={p.value === currentPlan ? 'plan plan-current' : 'plan'}>
                <strong>{planLabel(p.value)}</strong>
                <span>{p.fee}</span>
                <span className="muted small">{p.what}</span>
                {p.value === currentPlan ? (
                  <span className="badge badge-success">Current plan</span>
                ) : (
                  <button type="button" className="button" onClick={() => setPlanChoice(p.value)}>
                    {PLAN_ORDER.indexOf(p.value) > PLAN_ORDER.indexOf(currentPlan) ? `Upgrade to ${planLabel(p.value)}` : `Move to ${planLabel(p.value)}`}
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section className="card" aria-labelledby="credits-title">
        <h2 id="credits-title">Credits</h2>
        <p className="muted">GPU time is drawn from prepaid credits. Buy more through the payment provider&apos;s checkout.</p>
        <form onSubmit={buy} noValidate className="inline-form">
          <Field label="Amount in US dollars" name="amount" type="number" min={5} max={10000} step={1} defaultValue={20} required hint="$5 to $10,000." error={fields.amountCents} />
          <SubmitButton busy={buying} busyLabel="Opening checkout…">Buy credits</SubmitButton>
        </form>
        {paymentsOff ? (
          <p className="banner banner-error" role="alert">
            Payments are not set up on this Kiln, so credits and plans cannot be bought here: ask its administrator.
          </p>
        ) : (
          <ErrorBanner error={buyError} />
        )}
        <h3>History</h3>
        <ErrorBanner error={credits.error} onRetry={credits.reload} />
        {!credits.error && (
          <DataTable
            caption="Credit history"
            columns={creditColumns}
            rows={credits.data?.entries}
            rowKey={(e) => e.id}
            empty={<EmptyState title="No credit movements yet" />}
          />
        )}
      </section>

      <section className="card" aria-labelledby="invoices-title">
        <h2 id="invoices-title">Invoices</h2>
        <ErrorBanner error={downloadError} />
        <ErrorBanner error={invoices.error} onRetry={invoices.reload} />
        {!invoices.error && (
          <DataTable
            caption="Invoices"
            columns={invoiceColumns}
            rows={invoices.data}
            rowKey={(i) => i.id}
            empty={<EmptyState title="No invoices yet">An invoice is issued after each month with usage or a plan fee.</EmptyState>}
          />
        )}
      </section>

      <ConfirmDialog
        open={!!planChoice}
        title={planChoice ? `Change to the ${planLabel(planChoice)} plan?` : ''}
        confirmLabel={planChoice && currentPlan && PLAN_ORDER.indexOf(planChoice) > PLAN_ORDER.indexOf(currentPlan) ? 'Continue to payment' : 'Change plan'}
        destructive={false}
        onClose={() => setPlanChoice(undefined)}
        onConfirm={async () => {
          if (!planChoice) return;
          const change = await ok(api.POST('/v1/billing/upgrade', { body: { plan: planChoice } }));
          if (change.checkout) {
            window.location.assign(change.checkout.url);
            return;
          }
          toast(change.effectiveAt && new Date(change.effectiveAt) > new Date()
            ? `The plan becomes ${planLabel(change.plan)} on ${day(change.effectiveAt)}`
            : `The plan is now ${planLabel(change.plan)}`);
          organization.setData(await myOrganization.get(true));
        }}
      >
        <p>
          {planChoice && currentPlan && PLAN_ORDER.indexOf(planChoice) > PLAN_ORDER.indexOf(currentPlan)
            ? 'A dearer plan is paid through the payment provider’s checkout now; it takes effect once paid.'
            : 'A cheaper plan takes effect when the current billing month ends; until then nothing changes.'}
        </p>
      </ConfirmDialog>
    </>
  );
}
