// Administration, Analytics (GET /v1/admin/analytics): sign-ups, active organizations and new deployments
// by GPU type over a window of whole UTC days: totals on cards, the days on a chart (the lazy MetricChart,
// so uPlot loads only here) and in a table for those who cannot see the chart. The window is in the
// address (from, to), the route's default (the last 30 days) when absent.
import { lazy, Suspense, useMemo, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { api, ok, type Schemas } from '../../api.ts';
import { DataTable, EmptyState, ErrorBanner, Field, fieldErrors, LoadingBlock, PageHeader, Stat, useApi } from '../../ui/index.ts';
import type { ChartSeries } from '../../ui/MetricChart.tsx';
import { AdminOnly } from './AdminOnly.tsx';

const MetricChart = lazy(() => import('../../ui/MetricChart.tsx'));

type Day = Schemas['AdminAnalytics']['days'][number];

const DAY_MS = 86_400_000;
const PRESETS = [7, 30, 90] as const;
const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
const utcDay = (time: number) => new Date(time).toISOString().slice(0, 10);
/** A day as the page shows it: the UTC date, in the reader's words. */
const dayLabel = (day: string) => new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric' });

export default function AdminAnalytics() {
  return <AdminOnly title="Analytics"><Analytics /></AdminOnly>;
}

function Analytics() {
  const [params, setParams] = useSearchParams();
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  const analytics = useApi(() => ok(api.GET('/v1/admin/analytics', { params: { query: { ...(from ? { from } : {}), ...(to ? { to } : {}) } } })), [from, to]);
  const a = analytics.data;
  const invalid = fieldErrors(analytics.error);

  const series = useMemo<ChartSeries[]>(() => {
    if (!a) return [];
    const points = (value: (d: Day) => number) => a.days.map((d) => ({ time: Date.parse(`${d.day}T00:00:00Z`) / 1000, value: value(d) }));
    return [
      { label: 'sign-ups', points: points((d) => d.signups) },
      { label: 'active organizations', points: points((d) => d.activeOrganizations) },
      { label: 'new deployments', points: points((d) => sum(d.deploymentsByGpu)) },
    ];
  }, [a]);

  const show = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    for (const name of ['from', 'to']) {
      const value = String(form.get(name) ?? '');
      if (value) next.set(name, value);
    }
    setParams(next);
  };
  const lastDays = (days: number) => {
    const today = Date.now();
    setParams(new URLSearchParams({ from: utcDay(today - (days - 1) * DAY_MS), to: utcDay(today) }));
  };

  const deployments = a ? sum(a.totals.deploymentsByGpu) : 0;
  const quiet = a && a.totals.signups === 0 && a.totals.activeOrganizations === 0 && deployments === 0;
  const gpus = a ? Object.entries(a.totals.deploymentsByGpu).sort(([x, m], [y, n]) => n - m || x.localeCompare(y)) : undefined;

  return (
    <>
      <PageHeader title="Analytics" description="How the platform grows: new users, organizations at work and deployments created, per day (UTC)." />
      <section className="card" aria-labelledby="window-title">
        <h2 id="window-title">Window</h2>
        <form className="filters" onSubmit={show} key={`${from}|${to}|${a?.from ?? ''}`} aria-label="Analytics window">
          <Field label="From" name="from" type="date" defaultValue={from || a?.from} hint="First day, UTC." error={invalid.from} />
          <Field label="To" name="to" type="date" defaultValue={to || a?.to} hint="Last day, included." error={invalid.to} />
          <div className="filters-actions">
            <button type="submit" className="button button-primary">Show</button>
          </div>
        </form>
        <div className="row" role="group" aria-label="Recent windows">
          {PRESETS.map((days) => <button key={days} type="button" className="button" onClick={() => lastDays(days)}>Last {days} days</button>)}
        </div>
      </section>

      <ErrorBanner error={analytics.error} onRetry={analytics.reload} />
      {!a && !analytics.error && <LoadingBlock lines={8} label="Loading analytics" />}
      {a && (
        <>
          <section aria-labelledby="totals-title" className="stack-s">
            <h2 id="totals-title">{dayLabel(a.from)} – {dayLabel(a.to)}</h2>
            <div className="stats">
              <Stat label="Sign-ups" value={a.totals.signups.toLocaleString()} />
              <Stat label="Active organizations" value={a.totals.activeOrganizations.toLocaleString()} />
              <Stat label="Deployments created" value={deployments.toLocaleString()} />
            </div>
            <p className="muted small">An active organization made at least one audited request (a change, or a call with an API key).</p>
          </section>

          {quiet ? (
            <EmptyState title="Nothing happened in this window" action={<button type="button" className="button" onClick={() => lastDays(30)}>Show the last 30 days</button>}>
              No sign-up, no audited request and no new deployment between these days.
            </EmptyState>
          ) : (
            <>
              <section className="card" aria-labelledby="per-day-title">
                <h2 id="per-day-title">Per day</h2>
                <Suspense fallback={<LoadingBlock lines={6} label="Loading the chart" />}>
                  <MetricChart title="Sign-ups, active organizations and new deployments per day" series={series} unit="per day" />
                </Suspense>
                <details>
                  <summary>The same figures as a table</summary>
                  <DataTable
                    caption="Figures per day"
                    rows={a.days}
                    rowKey={(d) => d.day}
                    columns={[
                      { header: 'Day', cell: (d) => dayLabel(d.day) },
                      { header: 'Sign-ups', numeric: true, cell: (d) => d.signups },
                      { header: 'Active organizations', numeric: true, cell: (d) => d.activeOrganizations },
                      { header: 'New deployments', numeric: true, cell: (d) => sum(d.deploymentsByGpu) },
                    ]}
                  />
                </details>
              </section>
              <section className="stack" aria-labelledby="gpu-title">
                <h2 id="gpu-title">Deployments created by GPU type</h2>
                <DataTable
                  caption="Deployments created by GPU type"
                  rows={gpus}
                  rowKey={([gpu]) => gpu}
                  empty={<p className="muted">No deployment was created in this window.</p>}
                  columns={[
                    { header: 'GPU type', cell: ([gpu]) => <strong>{gpu}</strong> },
                    { header: 'Deployments', numeric: true, cell: ([, n]) => n },
                    { header: 'Share', numeric: true, cell: ([, n]) => `${Math.round((n / deployments) * 100)}%` },
                  ]}
                />
              </section>
            </>
          )}
        </>
      )}
    </>
  );
}
