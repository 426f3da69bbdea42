// Administration, Feature flags: each flag's default, rollout and overrides; switch, create, delete.
import { useState } from 'react';
import { api, ok, type Schemas } from '../../api.ts';
import { ConfirmDialog, DataTable, EmptyState, ErrorBanner, Field, PageHeader, SubmitButton, useApi, useSubmit, useToast, type Column } from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type Flag = Schemas['FeatureFlag'];

export default function AdminFeatureFlags() {
  return <AdminOnly title="Feature flags"><FeatureFlags /></AdminOnly>;
}

function FeatureFlags() {
  const toast = useToast();
  const flags = useApi(() => ok(api.GET('/v1/admin/feature-flags')), []);
  const { busy, error, fields, setError, onSubmit } = useSubmit();
  const [deleting, setDeleting] = useState<Flag>();

  // A switch does not make the new-flag form busy, so it sets the shared error itself.
  const toggle = async (flag: Flag) => {
    setError(undefined);
    try {
      const saved = await ok(api.PATCH('/v1/admin/feature-flags/{id}', { params: { path: { id: flag.id } }, body: { enabled: !flag.enabled } }));
      flags.setData((list) => list?.map((f) => (f.id === saved.id ? saved : f)));
      toast(`${saved.key} is ${saved.enabled ? 'on' : 'off'} for everyone`);
    } catch (e) {
      setError(e);
    }
  };
  const create = onSubmit(async (form, formElement) => {
    const rollout = String(form.get('rolloutPercent') ?? '').trim();
    const flag = await ok(api.POST('/v1/admin/feature-flags', {
      body: { key: String(form.get('key') ?? '').trim(), description: String(form.get('description') ?? '').trim(), enabled: false, rolloutPercent: rollout ? Number(rollout) : 0, overrides: {} },
    }));
    toast(`Flag ${flag.key} created, off`);
    formElement.reset();
    flags.reload();
  });

  const columns: Column<Flag>[] = [
    { header: 'Flag', cell: (f) => <span className="stack-xs"><code><strong>{f.key}</strong></code>{f.description && <span className="muted small">{f.description}</span>}</span> },
    { header: 'For everyone', cell: (f) => <button type="button" className="button" aria-pressed={f.enabled} aria-label={`${f.key} on for everyone`} onClick={() => void toggle(f)}>{f.enabled ? 'On' : 'Off'}</button> },
    { header: 'Rollout', numeric: true, cell: (f) => `${f.rolloutPercent}%` },
    { header: 'Overrides', numeric: true, cell: (f) => Object.keys(f.overrides).length },
    { header: 'Actions', cell: (f) => <button type="button" className="button button-danger-quiet" aria-label={`Delete ${f.key}`} onClick={() => setDeleting(f)}>Delete</button> },
  ];
  return (
    <>
      <PageHeader title="Feature flags" description="On for everyone, for a share of organizations, or per organization (overrides win)." />
      <ErrorBanner error={error} />
      <section className="stack" aria-labelledby="flags-title">
        <h2 id="flags-title">Flags</h2>
        <ErrorBanner error={flags.error} onRetry={flags.reload} />
        {!flags.error && <DataTable caption="Feature flags" columns={columns} rows={flags.data} rowKey={(f) => f.id} empty={<EmptyState title="No feature flags" />} />}
      </section>
      <section className="card" aria-labelledby="new-flag-title">
        <h2 id="new-flag-title">New flag</h2>
        <form className="stack" noValidate onSubmit={create}>
          <Field label="Key" name="key" required placeholder="new-scheduler" error={fields.key} />
          <Field label="Description" name="description" error={fields.description} />
          <Field label="Rollout (%)" name="rolloutPercent" type="number" min={0} max={100} inputMode="numeric" hint="Share of organizations it is on for; empty: none." error={fields.rolloutPercent} />
          <div><SubmitButton busy={busy} busyLabel="Creating…">Create flag</SubmitButton></div>
        </form>
      </section>
      <ConfirmDialog
        open={!!deleting}
        title={`Delete the flag ${deleting?.key ?? ''}?`}
        confirmLabel="Delete flag"
        onClose={() => setDeleting(undefined)}
        onConfirm={async () => {
          if (!deleting) return;
          await ok(api.DELETE('/v1/admin/feature-flags/{id}', { params: { path: { id: deleting.id } } }));
          toast(`Flag ${deleting.key} deleted`);
          flags.reload();
        }}
      >
        <p>Code asking for it gets its default (off) from now on.</p>
      </ConfirmDialog>
    </>
  );
}
