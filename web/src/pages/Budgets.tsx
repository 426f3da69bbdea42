// Observe, Budgets: spend limits per day or month, for the organization or one deployment, and what Kiln
// does when one is reached (GET/POST /v1/cost-controls/alerts; a budget is a spend alert rule, changed and
// deleted as one: PUT and DELETE /v1/alerts/{id}).
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
  const [editing, setEditing] = useState<Budget>();
  const [deleting, setDeleting] = useState<Budget>();

  const columns: Column<Budget>[] = [
    { header: 'Name', cell: (b) => <strong>{b.name}</strong> },
    { header: 'Limit', numeric: true, cell: (b) => `${usd(b.limitCents)} a ${b.period}` },
    { header: 'Spent', numeric: true, cell: (b) => (b.spentCents === null ? <span className="muted">Not yet measured</span> : `${usd(b.spentCents)}${b.basis === 'forecast' ? ' (forecast)' : ''}`) },
    { header: 'Covers', cell: (b) => b.deploymentName ?? 'The whole organization' },
    { header: 'When reached', cell: (b) => actionLabel(b.action) },
    { header: 'State', cell: (b) => <span className={`badge badge-${b.state}`}>{b.state === 'firing' ? 'reached' : b.state}</span> },
    {
      header: 'Actions',
      cell: (b) => (
        <span className="row">
          <button type="button" className="button button-quiet" aria-label={`Edit ${b.name}`} onClick={() => setEditing(b)}>Edit</button>
          <button type="button" className="button button-danger-quiet" aria-label={`Delete ${b.name}`} onClick={() => setDeleting(b)}>Delete</button>
        </span>
      ),
    },
  ];

  return (
    <>
      <PageHeader title="Budgets" description="Spend limits per day or month (UTC). When one is reached, Kiln alerts and, as you choose, refuses new deployments or stops running ones." />
      <BudgetForm
        key={editing?.id ?? 'new'}
        budget={editing}
        deployments={deployments.data ?? []}
        onCancel={() => setEditing(undefined)}
        onSaved={(message) => { toast(message); setEditing(undefined); budgets.reload(); }}
      />
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
          if (editing?.id === deleting.id) setEditing(undefined);
          budgets.reload();
        }}
      >
        <p>Its limit stops applying at once: what it refused is allowed again.</p>
      </ConfirmDialog>
    </>
  );
}

/** A new budget, or (`budget`) the one being changed, its fields prefilled. */
function BudgetForm({ budget, deployments, onCancel, onSaved }: {
  budget?: Budget; deployments: { value: string; label: string }[]; onCancel(): void; onSaved(message: string): void;
}) {
  const { busy, error, fields, onSubmit } = useSubmit();
  // The budget's own deployment stays a choice even when the list lacks it (deleted since, or not loaded yet).
  const covered = budget?.deploymentId && !deployments.some((d) => d.value === budget.deploymentId) ? [{ value: budget.deploymentId, label: budget.deploymentName ?? budget.deploymentId }] : [];

  const save = onSubmit(async (form, formElement) => {
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const dollars = text('limit');
    // The form takes dollars; the API counts cents. An empty or non-number field is sent as 0, which the API refuses at the field.
    const limitCents = dollars === '' || Number.isNaN(Number(dollars)) ? 0 : Math.round(Number(dollars) * 100);
    const deploymentId = text('deploymentId') || null;
    const fieldsSent = { name: text('name'), period: text('period') as Budget['period'], basis: text('basis') as Budget['basis'], action: text('action') as Budget['action'] };
    if (budget) {
      // A budget is a spend rule: changed as one, its limit the rule's threshold. The deployment is sent only
      // when it changes, so a budget whose deployment is gone can still be edited.
      const saved = await ok(api.PUT('/v1/alerts/{id}', {
        params: { path: { id: budget.id } },
        body: { ...fieldsSent, threshold: limitCents, ...(deploymentId !== (budget.deploymentId ?? null) ? { deploymentId } : {}) },
      }));
      onSaved(`Budget “${saved.name}” saved`);
    } else {
      const created = await ok(api.POST('/v1/cost-controls/alerts', { body: { ...fieldsSent, limitCents, deploymentId } }));
      formElement.reset();
      onSaved(`Budget “${created.name}” created`);
    }
  });

  return (
    <section className="card" aria-labelledby="budget-form-title">
      <h2 id="budget-form-title">{budget ? `Edit “${budget.name}”` : 'New budget'}</h2>
      <form className="stack" noValidate onSubmit={save}>
        <ErrorBanner error={error} />
        <Field label="Name" name="name" required maxLength={100} placeholder="Monthly GPU spend" defaultValue={budget?.name} autoFocus={!!budget} error={fields.name} />
        <Field label="Limit (US dollars)" name="limit" type="number" min={0.01} step="0.01" inputMode="decimal" required
          defaultValue={budget ? budget.limitCents / 100 : undefined} error={fields.limitCents ?? fields.threshold} />
        <SelectField label="Period" name="period" defaultValue={budget?.period ?? 'month'} options={[{ value: 'month', label: 'Each calendar month' }, { value: 'day', label: 'Each day' }]} error={fields.period} />
        <SelectField label="Counts" name="basis" defaultValue={budget?.basis ?? 'actual'} options={[{ value: 'actual', label: 'What was spent so far' }, { value: 'forecast', label: 'The forecast to the period\'s end at the current hourly cost' }]} error={fields.basis} />
        <SelectField label="Covers" name="deploymentId" defaultValue={budget?.deploymentId ?? ''} options={[{ value: '', label: 'The whole organization' }, ...deployments, ...covered]} error={fields.deploymentId} />
        <fieldset className="radio-group">
          <legend>When it is reached</legend>
          {ACTIONS.map((a, i) => (
            <label key={a.value} className="radio-option">
              <input type="radio" name="action" value={a.value} defaultChecked={budget ? budget.action === a.value : i === 0} />
              <span>{a.label}</span>
            </label>
          ))}
        </fieldset>
        {fields.action && <p className="field-error">{fields.action}</p>}
        <div className="row">
          {budget
            ? <SubmitButton busy={busy} busyLabel="Saving…">Save budget</SubmitButton>
            : <SubmitButton busy={busy} busyLabel="Creating…">Create budget</SubmitButton>}
          {budget && <button type="button" className="button button-quiet" onClick={onCancel}>Cancel</button>}
        </div>
      </form>
    </section>
  );
}
