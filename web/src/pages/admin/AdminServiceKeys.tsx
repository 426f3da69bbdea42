// Administration, Service keys: the platform's server-to-server keys (srk_...). Listed without their values;
// created and rotated with the new value shown once; revoked. Each change is confirmed first, since a rotated
// or revoked key fails its holder's next call.
import { useState } from 'react';
import { api, ok, type Schemas } from '../../api.ts';
import {
  ConfirmDialog, CopyButton, DataTable, EmptyState, ErrorBanner, Field, PageHeader, SubmitButton, useApi, useSubmit, useToast, type Column,
} from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type ServiceKey = Schemas['ServiceKey'];
type WithValue = Schemas['ServiceKeyWithValue'];

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'Never');

export default function AdminServiceKeys() {
  return <AdminOnly title="Service keys"><ServiceKeys /></AdminOnly>;
}

function ServiceKeys() {
  const toast = useToast();
  const keys = useApi(() => ok(api.GET('/v1/admin/service-keys')), []);
  const { busy, error, fields, onSubmit } = useSubmit();
  // The value just made (created or rotated): kept in this page's memory only, gone on reload.
  const [shown, setShown] = useState<{ key: WithValue; how: 'created' | 'rotated' }>();
  const [rotating, setRotating] = useState<ServiceKey>();
  const [revoking, setRevoking] = useState<ServiceKey>();

  const create = onSubmit(async (form, formElement) => {
    const key = await ok(api.POST('/v1/admin/service-keys', { body: { name: String(form.get('name') ?? '').trim() } }));
    setShown({ key, how: 'created' });
    formElement.reset();
    keys.reload();
  });

  const columns: Column<ServiceKey>[] = [
    { header: 'Name', cell: (k) => <strong>{k.name}</strong> },
    { header: 'Key', cell: (k) => <code>{k.prefix}…</code> },
    { header: 'Created', cell: (k) => <span className="stack-xs"><span>{when(k.createdAt)}</span><span className="muted small">by <code>{k.createdBy}</code></span></span> },
    { header: 'Rotated', cell: (k) => when(k.rotatedAt) },
    { header: 'Last used', cell: (k) => when(k.lastUsedAt) },
    {
      header: 'Actions',
      cell: (k) => (
        <span className="row-actions">
          <button type="button" className="button" aria-label={`Rotate ${k.name}`} onClick={() => setRotating(k)}>Rotate</button>
          <button type="button" className="button button-danger-quiet" aria-label={`Revoke ${k.name}`} onClick={() => setRevoking(k)}>Revoke</button>
        </span>
      ),
    },
  ];

  return (
    <>
      <PageHeader
        title="Service keys"
        description="Keys for Kiln's own servers and jobs: a request with one acts in the organization it names (X-Organization-Id) with an owner's rights plus platform administration, past row-level security. Keep them on servers, never in a browser or an app."
      />

      {shown && (
        <section className="banner banner-success" aria-labelledby="shown-key-title">
          <div className="stack-s grow">
            <h2 id="shown-key-title">Key “{shown.key.name}” {shown.how}</h2>
            <p>
              <strong>Copy it now: it will not be shown again.</strong> Kiln keeps only its hash.
              {shown.how === 'rotated' && ' The previous value already stopped working.'}
            </p>
            <div className="secret-row">
              <code className="secret" data-testid="service-key-value">{shown.key.key}</code>
              <CopyButton value={shown.key.key} label="Copy key" />
            </div>
          </div>
          <button type="button" className="button button-quiet" onClick={() => setShown(undefined)}>I have copied it</button>
        </section>
      )}

      <section className="card" aria-labelledby="new-service-key-title">
        <h2 id="new-service-key-title">Create a service key</h2>
        <form className="stack" noValidate onSubmit={create}>
          <ErrorBanner error={error} />
          <Field label="Name" name="name" required maxLength={100} hint="The server or job that will hold it, e.g. “billing-sync”." error={fields.name} />
          <div><SubmitButton busy={busy} busyLabel="Creating…">Create key</SubmitButton></div>
        </form>
      </section>

      <section className="stack" aria-labelledby="service-keys-title">
        <h2 id="service-keys-title">Keys in use</h2>
        <ErrorBanner error={keys.error} onRetry={keys.reload} />
        {!keys.error && (
          <DataTable
            caption="Service keys"
            columns={columns}
            rows={keys.data}
            rowKey={(k) => k.id}
            empty={<EmptyState title="No service keys">Create one above for a server that calls Kiln on the platform&apos;s behalf.</EmptyState>}
          />
        )}
      </section>

      <ConfirmDialog
        open={!!rotating}
        title={`Rotate “${rotating?.name ?? ''}”?`}
        confirmLabel="Rotate key"
        onClose={() => setRotating(undefined)}
        onConfirm={async () => {
          if (!rotating) return;
          const key = await ok(api.POST('/v1/admin/service-keys/{id}/rotate', { params: { path: { id: rotating.id } } }));
          setShown({ key, how: 'rotated' });
          keys.reload();
        }}
      >
        <p>
          A new value is made and shown once; <code>{rotating?.prefix}…</code> stops working at once, so whatever holds it fails until it is given the new one.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={!!revoking}
        title={`Revoke “${revoking?.name ?? ''}”?`}
        confirmLabel="Revoke key"
        onClose={() => setRevoking(undefined)}
        onConfirm={async () => {
          if (!revoking) return;
          await ok(api.DELETE('/v1/admin/service-keys/{id}', { params: { path: { id: revoking.id } } }));
          // A revoked key's value, if it is the one on show, is of no use any more.
          setShown((s) => (s?.key.id === revoking.id ? undefined : s));
          toast(`Key “${revoking.name}” revoked`);
          keys.reload();
        }}
      >
        <p>Calls with <code>{revoking?.prefix}…</code> get 401 from now on. This cannot be undone.</p>
      </ConfirmDialog>
    </>
  );
}
