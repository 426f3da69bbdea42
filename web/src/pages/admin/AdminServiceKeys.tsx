// Administration, Service keys: the platform's server-to-server keys (srk_...). Listed without their values;
// created and rotated with the new value shown once; revoked. Each change is confirmed first, since a rotated
// or revoked key fails its holder's next call.
import { useState } from 'react';
import { api, ok, type Schemas } from '../../api.ts';
import { ConfirmDialog, KeyActionButton, KeyManager, keyTime, PageHeader, useApi, useSubmit, useToast, type Column } from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type ServiceKey = Schemas['ServiceKey'];
type WithValue = Schemas['ServiceKeyWithValue'];

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
    { header: 'Created', cell: (k) => <span className="stack-xs"><span>{keyTime(k.createdAt)}</span><span className="muted small">by <code>{k.createdBy}</code></span></span> },
    { header: 'Rotated', cell: (k) => keyTime(k.rotatedAt) },
    { header: 'Last used', cell: (k) => keyTime(k.lastUsedAt) },
    {
      header: 'Actions',
      cell: (k) => (
        <span className="row-actions">
          <KeyActionButton label="Rotate" keyName={k.name} onClick={() => setRotating(k)} />
          <KeyActionButton label="Revoke" keyName={k.name} danger onClick={() => setRevoking(k)} />
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
      <KeyManager
        shown={shown && { name: shown.key.name, value: shown.key.key, how: shown.how }}
        onDismissShown={() => setShown(undefined)}
        valueTestId="service-key-value"
        create={{ title: 'Create a service key', nameHint: 'The server or job that will hold it, e.g. “billing-sync”.', busy, error, fields, onSubmit: create }}
        list={{
          title: 'Keys in use', caption: 'Service keys', keys, columns,
          empty: { title: 'No service keys', body: <>Create one above for a server that calls Kiln on the platform&apos;s behalf.</> },
        }}
        confirmations={(
          <>
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
        )}
      />
    </>
  );
}
