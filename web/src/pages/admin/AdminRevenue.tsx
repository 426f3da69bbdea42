// Administration, Revenue: organizations per plan, recurring revenue at list prices, the GPU run rate of
// live deployments and the credits not yet spent.
import { api, ok } from '../../api.ts';
import { DataTable, ErrorBanner, LoadingBlock, PageHeader, useApi } from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

const usd = (cents: number) => (cents / 100).toLocaleString(undefined, { style: 'currency', currency: 'USD' });

export default function AdminRevenue() {
  return <AdminOnly title="Revenue"><Revenue /></AdminOnly>;
}

function Revenue() {
  const revenue = useApi(() => ok(api.GET('/v1/admin/revenue')), []);
  const r = revenue.data;
  return (
    <>
      <PageHeader title="Revenue" description="At list prices: plans' monthly fees and the GPUs live deployments hold now." />
      <ErrorBanner error={revenue.error} onRetry={revenue.reload} />
      {!r && !revenue.error && <LoadingBlock lines={6} label="Loading revenue" />}
      {r && (
        <>
          <div className="cards">
            <section className="card"><h2>Monthly recurring revenue</h2><p className="figure">{usd(r.monthlyRecurringRevenueCents.total)}</p></section>
            <section className="card"><h2>GPU run rate</h2><p className="figure">{usd(r.gpuSpend.hourlyCents)} / hour</p><p className="muted">{usd(r.gpuSpend.projected30DaysCents)} over 30 days</p></section>
            <section className="card"><h2>Credits outstanding</h2><p className="figure">{usd(r.creditsOutstandingCents)}</p></section>
          </div>
          <section className="stack" aria-labelledby="plans-title">
            <h2 id="plans-title">Plans</h2>
            <DataTable
              caption="Plans"
              rows={Object.keys(r.organizations.byPlan)}
              rowKey={(p) => p}
              columns={[
                { header: 'Plan', cell: (p) => <strong>{p}</strong> },
                { header: 'Organizations', numeric: true, cell: (p) => r.organizations.byPlan[p] ?? 0 },
                { header: 'Price a month', numeric: true, cell: (p) => usd(r.planPricesCents[p] ?? 0) },
                { header: 'Revenue a month', numeric: true, cell: (p) => usd(r.monthlyRecurringRevenueCents.byPlan[p] ?? 0) },
              ]}
            />
          </section>
          <section className="stack" aria-labelledby="gpus-title">
            <h2 id="gpus-title">GPU spend by type</h2>
            <DataTable
              caption="GPU spend by type"
              rows={Object.entries(r.gpuSpend.byGpuType)}
              rowKey={([gpu]) => gpu}
              empty={<p className="muted">No live deployment holds GPUs.</p>}
              columns={[
                { header: 'GPU type', cell: ([gpu]) => <strong>{gpu}</strong> },
                { header: 'Deployments', numeric: true, cell: ([, g]) => g.deployments },
                { header: 'Replicas', numeric: true, cell: ([, g]) => g.replicas },
                { header: 'Per hour', numeric: true, cell: ([, g]) => usd(g.hourlyCents) },
                { header: '30 days', numeric: true, cell: ([, g]) => usd(g.projected30DaysCents) },
              ]}
            />
          </section>
        </>
      )}
    </>
  );
}
