// Settings, API keys: list, create (the scope chosen with what it may do; the value shown once), revoke.
import { useState } from 'react';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import {
  ConfirmDialog, CopyButton, DataTable, EmptyState, ErrorBanner, Field, PageHeader, SubmitButton, useApi, useSubmit, useToast, type Column,
} from '../ui/index.ts';

type ApiKey = Schemas['ApiKey'];
type Scope = ApiKey['scope'];

/** Each scope, and what a key of it may do (control-plane/core/permissions.ts SCOPE_PERMISSIONS). */
const SCOPES: readonly { value: Scope; label: string; meaning: string }[] = [
  { value: 'full_access', label: 'Full access', meaning: 'Everything your role allows: deployments, billing, team, settings and keys.' },
  { value: 'deployments_only', label: 'Deployments only', meaning: 'Create, change, delete and call deployments; read GPU types, models and templates. No billing, team or settings.' },
  { value: 'read_only', label: 'Read only', meaning: 'View deployments, metrics, logs and settings. No changes, no inference, no billing.' },
];
const scopeLabel = (scope: Scope) => SCOPES.find((s) => s.value === scope)?.label ?? scope;

const dateTime = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'Never');

export default function ApiKeys() {
  const toast = useToast();
  const keys = useApi(() => ok(api.GET('/v1/settings/api-keys', { params: { query: { orgId: currentOrgId() } } })), []);
  const [created, setCreated] = useState<Schemas['ApiKeyWithValue']>();
  const { busy, error: createError, fields, onSubmit } = useSubmit();
  const [revoking, setRevoking] = useState<ApiKey>();
  // A key acts in one organization: the CLI is told which (kiln login --org), as the reference API's calls are (orgId).
  const organizationId = currentOrgId();
  const cliLogin = `kiln login --api-key-stdin --org ${organizationId} --server ${window.location.origin}`;

  const create = onSubmit(async (form, formElement) => {
    const key = await ok(api.POST('/v1/settings/api-keys', { body: { name: String(form.get('name') ?? ''), scope: String(form.get('scope')) as Scope } }));
    setCreated(key);
    formElement.reset();
    keys.reload();
  });

  const columns: Column<ApiKey>[] = [
    { header: 'Name', cell: (k) => <strong>{k.name}</strong> },
    { header: 'Key', cell: (k) => <code>{k.prefix}…</code> },
    { header: 'Scope', cell: (k) => scopeLabel(k.scope) },
    { header: 'Created', cell: (k) => dateTime(k.createdAt) },
    { header: 'Last used', cell: (k) => dateTime(k.lastUsedAt) },
    {
      header: 'Actions',
      cell: (k) => (
        <button type="button" className="button button-danger-quiet" onClick={() => setRevoking(k)} aria-label={`Revoke ${k.name}`}>
          Revoke
        </button>
      ),
    },
  ];

  return (
    <>
      <PageHeader title="API keys" description="Keys let the CLI, the SDK and your own code call Kiln as your organization. Send one as Authorization: Bearer <key>." />
      <p className="muted">
        This organization&apos;s id, which the reference API&apos;s <code>orgId</code> and <code>kiln login --org</code> take: <code data-testid="organization-id">{organizationId}</code>{' '}
        <CopyButton value={organizationId} label="Copy the organization id" />
      </p>

      {created && (
        <section className="banner banner-success" aria-labelledby="new-key-title">
          <div className="stack-s grow">
            <h2 id="new-key-title">Key “{created.name}” created</h2>
            <p>
              <strong>Copy it now: it will not be shown again.</strong> Kiln keeps only its hash; if you lose it, revoke it and create another.
            </p>
            <div className="secret-row">
              <code className="secret" data-testid="new-key-value">
                {created.key}
              </code>
              <CopyButton value={created.key} label="Copy key" />
            </div>
            <p>The CLI logs in with it and this organization&apos;s id:</p>
            <div className="secret-row">
              <code data-testid="cli-login">{cliLogin}</code>
              <CopyButton value={cliLogin} label="Copy the login command" />
            </div>
          </div>
          <button type="button" className="button button-quiet" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </section>
      )}

      <section className="card" aria-labelledby="create-title">
        <h2 id="create-title">Create a key</h2>
        <form onSubmit={create} noValidate className="stack">
          <ErrorBanner error={createError} />
          <Field label="Name" name="name" required maxLength={100} hint="Where it is used, e.g. “CI” or “laptop”." error={fields.name} />
          <fieldset className="radio-group">
            <legend>Scope</legend>
            {SCOPES.map((s, i) => (
              <label key={s.value} className="radio-option">
                <input type="radio" name="scope" value={s.value} defaultChecked={i === 0} />
                <span>
                  <strong>{s.label}</strong>
                  <span className="muted small block">{s.meaning}</span>
                </span>
              </label>
            ))}
          </fieldset>
          <div>
            <SubmitButton busy={busy} busyLabel="Creating…">Create key</SubmitButton>
          </div>
        </form>
      </section>

      <section aria-labelledby="keys-title" className="stack">
        <h2 id="keys-title">Your keys</h2>
        <ErrorBanner error={keys.error} onRetry={keys.reload} />
        {!keys.error && (
          <DataTable
            caption="API keys"
            columns={columns}
            rows={keys.data}
            rowKey={(k) => k.id}
            empty={<EmptyState title="No API keys yet">Create one above to use Kiln from the CLI, the SDK or your code.</EmptyState>}
          />
        )}
      </section>

      <ConfirmDialog
        open={!!revoking}
        title={`Revoke “${revoking?.name ?? ''}”?`}
        confirmLabel="Revoke key"
        onClose={() => setRevoking(undefined)}
        onConfirm={async () => {
          if (!revoking) return;
          await ok(api.DELETE('/v1/settings/api-keys', { params: { query: { id: revoking.id, orgId: currentOrgId() } } }));
          toast(`Key “${revoking.name}” revoked`);
          keys.reload();
        }}
      >
        <p>
          Programs using <code>{revoking?.prefix}…</code> will get 401 from their next call. This cannot be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}
