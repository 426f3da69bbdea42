// Settings, API keys: list, create (the scope chosen with what it may do; the value shown once), revoke.
import { useState } from 'react';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import { CopyButton, KeyManager, keyTime, PageHeader, useApi, useSubmit, useToast, type Column } from '../ui/index.ts';

type ApiKey = Schemas['ApiKey'];
type Scope = ApiKey['scope'];

/** Each scope, and what a key of it may do (control-plane/core/permissions.ts SCOPE_PERMISSIONS). */
const SCOPES: readonly { value: Scope; label: string; meaning: string }[] = [
  { value: 'full_access', label: 'Full access', meaning: 'Everything your role allows: deployments, billing, team, settings and keys.' },
  { value: 'deployments_only', label: 'Deployments only', meaning: 'Create, change, delete and call deployments; read GPU types, models and templates. No billing, team or settings.' },
  { value: 'read_only', label: 'Read only', meaning: 'View deployments, metrics, logs and settings. No changes, no inference, no billing.' },
];
const scopeLabel = (scope: Scope) => SCOPES.find((s) => s.value === scope)?.label ?? scope;

export default function ApiKeys() {
  const toast = useToast();
  const keys = useApi(() => ok(api.GET('/v1/settings/api-keys', { params: { query: { orgId: currentOrgId() } } })), []);
  const [created, setCreated] = useState<Schemas['ApiKeyWithValue']>();
  const { busy, error, fields, onSubmit } = useSubmit();
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
    { header: 'Created', cell: (k) => keyTime(k.createdAt) },
    { header: 'Last used', cell: (k) => keyTime(k.lastUsedAt) },
  ];

  return (
    <>
      <PageHeader title="API keys" description="Keys let the CLI, the SDK and your own code call Kiln as your organization. Send one as Authorization: Bearer <key>." />
      <p className="muted">
        This organization&apos;s id, which the reference API&apos;s <code>orgId</code> and <code>kiln login --org</code> take: <code data-testid="organization-id">{organizationId}</code>{' '}
        <CopyButton value={organizationId} label="Copy the organization id" />
      </p>
      <KeyManager
        shown={created && { name: created.name, value: created.key, how: 'created' }}
        onDismissShown={() => setCreated(undefined)}
        valueTestId="new-key-value"
        shownNote={(
          <>
            <p>The CLI logs in with it and this organization&apos;s id:</p>
            <div className="secret-row">
              <code data-testid="cli-login">{cliLogin}</code>
              <CopyButton value={cliLogin} label="Copy the login command" />
            </div>
          </>
        )}
        create={{
          title: 'Create a key', nameHint: 'Where it is used, e.g. “CI” or “laptop”.', busy, error, fields, onSubmit: create,
          extra: (
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
          ),
        }}
        list={{
          title: 'Your keys', caption: 'API keys', keys, columns,
          empty: { title: 'No API keys yet', body: 'Create one above to use Kiln from the CLI, the SDK or your code.' },
        }}
        actions={[{
          label: 'Revoke', confirmLabel: 'Revoke key', danger: true,
          explain: (k) => <>Programs using <code>{k.prefix}…</code> will get 401 from their next call. This cannot be undone.</>,
          run: async (k) => {
            await ok(api.DELETE('/v1/settings/api-keys', { params: { query: { id: k.id, orgId: currentOrgId() } } }));
            toast(`Key “${k.name}” revoked`);
            keys.reload();
          },
        }]}
      />
    </>
  );
}
