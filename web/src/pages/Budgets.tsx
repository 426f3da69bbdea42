// Observe, Budgets: spend limits per day or month, for the organization or one deployment, and what Kiln
// does when one is reached (GET/POST /v1/cost-controls/alerts; a budget is an alert rule, deleted as one).
import { useState } from 'react';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import { ConfirmDialog, DataTable, EmptyState, ErrorBanner, Field, PageHeader, SelectField, SubmitButton, useApi, useSubmit, useToast, type Column } from '../ui/index.ts';
import { deploymentChoices, usd, when } from './alertsShared.ts';

type Budget = Schemas['Budget'];

const ACTIONS: readonly { value: Budget['action']; label: string }[] = [
  { value: 'refuse', label: 'Refuse new deployments and scale-ups (they get 402 until the period ends or the budget is raised)' },
  { value: 'stop', label: 'Stop the deployments it covers, and refuse new ones' },
  { value: 'notify', label: 'Alert only: nothing is refused or stopped' },
];
const actionLabel = (a: Budget['action']) => ({ refuse: 'Refuses new deployments', stop: 'Stops deployments', notify: 'Alerts only' })[a];

export default function Budgets() {
  const toast = useToast();
  const budgets = useApi(() => ok(api.GET('/v1/cost-controls/alerts', { params: { query: { orgId: currentOrgId() } } })), []);
  const deployments = useApi(deploymentChoices, []);
  const { busy, error, fields, onSubmit } = useSubmit();
  const [deleting, setDeleting] = useState<Budget>();
  const deploymentName = (id?: string) => (id ? deployments.data?.find((d) => d.value === id)?.label ?? id : 'The whole organization');

  const create = onSubmit(async (form, formElement) => {
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const dollars = text('limit');
    const budget = await ok(api.POST('/v1/cost-controls/alerts', {
      body: {
        name: text('name'),
        // The form takes dollars; the API counts cents. An empty or non-number field is sent as 0, which the API refuses at the field.
        limitCents: dollars === '' || Number.isNaN(Number(dollars)) ? 0 : Math.round(Number(dollars) * 100),
        period: text('period') as Budget['period'],
        basis: text('basis') as Budget['basis'],
        action: text('action') as Budget['action'],
        deploymentId: text('deploymentId') || null,
      },
    }));
    toast(`Budget “${budget.name}” created`);
    formElement.reset();
    budgets.reload();
  });

  const columns: Column<Budget>[] = [
    { header: 'Name', cell: (b) => <strong>{b.name}</strong> },
    { header: 'Limit', numeric: true, cell: (b) => `${usd(b.limitCents)} a ${b.period}` },
    { header: 'Spent', numeric: true, cell: (b) => (b.spentCents === null ? <span className="muted">Not yet measured</span> : `${usd(b.spentCents)}${b.basis === 'forecast' ? ' (forecast)' : ''}`) },
    { header: 'Covers', cell: (b) => deploymentName(b.deploymentId) },
    { header: 'When reached', cell: (b) => actionLabel(b.action) },
    { header: 'State', cell: (b) => <span className={`badge badge-${b.state}`}>{b.state === 'firing' ? 'reached' : b.state}</span> },
    { header: 'Actions', cell: (b) => <button type="button" className="button button-danger-quiet" aria-label={`Delete ${b.name}`} onClick={() => setDeleting(b)}>Delete</button> },
  ];

  return (
    <>
      <PageHeader title="Budgets" description="Spend limits per day or month (UTC). When one is reached, Kiln alerts and, as you choose, refuses new deployments or stops running ones." />
      <section className="card" aria-labelledby="new-budget-title">
        <h2 id="new-budget-title">New budget</h2>
        <form className="stack" noValidate onSubmit={create}>
          <ErrorBanner error={error} />
          <Field label="Name" name="name" required maxLength={100} placeholder="Monthly GPU spend" error={fields.name} />
          <Field label="Limit (US dollars)" name="limit" type="number" min={0.01} step="0.01" inputMode="decimal" required error={fields.limitCents} />
          <SelectField label="Period" name="period" options={[{ value: 'month', label: 'Each calendar month' }, { value: 'day', label: 'Each day' }]} error={fields.period} />
          <SelectField label="Counts" name="basis" options={[{ value: 'actual', label: 'What was spent so far' }, { value: 'forecast', label: 'The forecast to the period\'s end at the current hourly cost' }]} error={fields.basis} />
          <SelectField label="Covers" name="deploymentId" options={[{ value: '', label: 'The whole organization' }, ...(deployments.data ?? [])]} error={fields.deploymentId} />
          <fieldset className="radio-group">
            <legend>When it is reached</legend>
            {ACTIONS.map((a, i) => (
              <label key={a.value} className="radio-option">
                <input type="radio" name="action" value={a.value} defaultChecked={i === 0} />
                <span>{a.label}</span>
              </label>
            ))}
          </fieldset>
          <div>
            <SubmitButton busy={busy} busyLabel="Creating…">Create budget</SubmitButton>
          </div>
        </form>
      </section>
      <section className="stack" aria-labelledby="budgets-title">
        <h2 id="budgets-title">Your budgets</h2>
        <ErrorBanner error={budgets.error} onRetry={budgets.reload} />
        {!budgets.error && (
          <DataTable caption="Budgets" columns={columns} rows={budgets.data} rowKey={(b) => b.id}
            empty={<EmptyState title="No budgets yet">Add one above so a busy month cannot surprise you.</EmptyState>} />
        )}
        {budgets.data?.some((b) => b.evaluatedAt) && <p className="muted small">Spend last measured {when(budgets.data.map((b) => b.evaluatedAt).filter(Boolean).sort().at(-1))}.</p>}
      </section>
      <ConfirmDialog
        open={!!deleting}
        title={`Delete the budget “${deleting?.name ?? ''}”?`}
        confirmLabel="Delete budget"
        onClose={() => setDeleting(undefined)}
        onConfirm={async () => {
          if (!deleting) return;
          await ok(api.DELETE('/v1/alerts/{id}', { params: { path: { id: deleting.id } } }));
          toast(`Budget “${deleting.name}” deleted`);
          budgets.reload();
        }}
      >
        <p>Its limit stops applying at once: what it refused is allowed again.</p>
      </ConfirmDialog>
    </>
  );
}
