// Administration, Service keys: the platform's server-to-server keys (srk_...). Listed without their values;
// created and rotated with the new value shown once; revoked. Each change is confirmed first, since a rotated
// or revoked key fails its holder's next call.
import { useState } from 'react';
import { api, ok, type Schemas } from '../../api.ts';
import { KeyManager, keyTime, PageHeader, useApi, useSubmit, useToast, type Column } from '../../ui/index.ts';
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
        actions={[
          {
            label: 'Rotate', confirmLabel: 'Rotate key',
            explain: (k) => <>A new value is made and shown once; <code>{k.prefix}…</code> stops working at once, so whatever holds it fails until it is given the new one.</>,
            run: async (k) => {
              const key = await ok(api.POST('/v1/admin/service-keys/{id}/rotate', { params: { path: { id: k.id } } }));
              setShown({ key, how: 'rotated' });
              keys.reload();
            },
          },
          {
            label: 'Revoke', confirmLabel: 'Revoke key', danger: true,
            explain: (k) => <>Calls with <code>{k.prefix}…</code> get 401 from now on. This cannot be undone.</>,
            run: async (k) => {
              await ok(api.DELETE('/v1/admin/service-keys/{id}', { params: { path: { id: k.id } } }));
              // A revoked key's value, if it is the one on show, is of no use any more.
              setShown((s) => (s?.key.id === k.id ? undefined : s));
              toast(`Key “${k.name}” revoked`);
              keys.reload();
            },
          },
        ]}
      />
    </>
  );
}
