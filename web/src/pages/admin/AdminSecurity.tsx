// Administration, Security (GET /v1/admin/security): the figures first, then what each is made of:
// accounts with failed sign-ins in the current window (and which of them are locked out), API keys not
// rotated for the route's number of days, keys never used, and the service role keys with their last use.
// The route answers at most 100 items per list with the full count, so a list says when it shows fewer.
import { Link } from 'react-router';
import { api, ok, type Schemas } from '../../api.ts';
import { DataTable, ErrorBanner, LoadingBlock, PageHeader, Stat, useApi, type Column } from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type Security = Schemas['AdminSecurity'];
type Key = Security['keysNotRotated']['items'][number];
type Attempts = Security['failedSignins']['accounts'][number];
type ServiceKey = Schemas['ServiceKey'];

const when = (iso: string | null, none = 'Never') => (iso ? new Date(iso).toLocaleString() : none);
const SCOPES: Record<string, string> = { full_access: 'Full access', deployments_only: 'Deployments only', read_only: 'Read only' };

export default function AdminSecurity() {
  return <AdminOnly title="Security"><SecurityOverview /></AdminOnly>;
}

/** "Showing 100 of 240" under a list the route cut short. */
function Shown({ shown, total }: { shown: number; total: number }) {
  return shown < total ? <p className="muted small">Showing the {shown} oldest of {total}.</p> : null;
}

function SecurityOverview() {
  const security = useApi(() => ok(api.GET('/v1/admin/security')), []);
  const s = security.data;

  const keyColumns = (lastColumn: Column<Key>): Column<Key>[] => [
    { header: 'Key', cell: (k) => <span className="stack-xs"><strong>{k.name}</strong><code className="muted small">{k.prefix}…</code></span> },
    {
      header: 'Organization',
      cell: (k) => <span className="stack-xs"><span>{k.organizationName}</span><Link to={`/admin/audit?apiKeyId=${encodeURIComponent(k.id)}`} className="small">Its audit records</Link></span>,
    },
    { header: 'Scope', cell: (k) => SCOPES[k.scope] ?? k.scope },
    { header: 'Created', cell: (k) => when(k.createdAt) },
    lastColumn,
  ];
  const attemptColumns: Column<Attempts>[] = [
    { header: 'Account', cell: (a) => <strong>{a.email}</strong> },
    { header: 'Failures', numeric: true, cell: (a) => `${a.failures} of ${s?.failedSignins.lockAfter ?? '?'}` },
    { header: 'State', cell: (a) => (a.locked ? <span className="badge badge-firing">Locked</span> : <span className="badge">Can still sign in</span>) },
    { header: 'Window ends', cell: (a) => when(a.windowEndsAt, 'Unknown') },
  ];
  const serviceKeyColumns: Column<ServiceKey>[] = [
    { header: 'Key', cell: (k) => <span className="stack-xs"><strong>{k.name}</strong><code className="muted small">{k.prefix}…</code></span> },
    { header: 'Created by', cell: (k) => <code className="small">{k.createdBy}</code> },
    { header: 'Created', cell: (k) => when(k.createdAt) },
    { header: 'Rotated', cell: (k) => when(k.rotatedAt) },
    { header: 'Last used', cell: (k) => when(k.lastUsedAt) },
  ];

  return (
    <>
      <PageHeader
        title="Security"
        description="Sign-in attacks in progress and credentials that need attention, across every organization."
        actions={<button type="button" className="button" onClick={security.reload}>Refresh</button>}
      />
      <ErrorBanner error={security.error} onRetry={security.reload} />
      {!s && !security.error && <LoadingBlock lines={8} label="Loading security" />}
      {s && (
        <>
          <section aria-labelledby="security-summary-title" className="stack-s">
            <h2 id="security-summary-title" className="visually-hidden">Summary</h2>
            <div className="stats">
              <Stat label={`Accounts failing sign-in (${s.failedSignins.windowMinutes} min)`} value={s.failedSignins.accounts.length.toLocaleString()} warn={s.failedSignins.accounts.length > 0} />
              <Stat label="Locked accounts" value={s.lockedAccounts.length.toLocaleString()} warn={s.lockedAccounts.length > 0} />
              <Stat label={`Keys not rotated in ${s.keysNotRotated.olderThanDays} days`} value={s.keysNotRotated.total.toLocaleString()} warn={s.keysNotRotated.total > 0} />
              <Stat label="Keys never used" value={s.keysNeverUsed.total.toLocaleString()} />
              <Stat label="Service role keys" value={s.serviceKeys.total.toLocaleString()} />
            </div>
          </section>

          <section className="stack" aria-labelledby="signins-title">
            <h2 id="signins-title">Failed sign-ins</h2>
            <p className="muted">
              Accounts with a wrong password in the last {s.failedSignins.windowMinutes} minutes. After {s.failedSignins.lockAfter} failures an account is locked until its window ends, even with the right password.
            </p>
            <DataTable caption="Failed sign-ins" columns={attemptColumns} rows={s.failedSignins.accounts} rowKey={(a) => a.email}
              empty={<p className="muted">No failed sign-in in the last {s.failedSignins.windowMinutes} minutes.</p>} />
          </section>

          <section className="stack" aria-labelledby="locked-title">
            <h2 id="locked-title">Locked accounts</h2>
            <DataTable
              caption="Locked accounts"
              columns={[
                { header: 'Account', cell: (a) => <strong>{a.email}</strong> },
                { header: 'Locked until', cell: (a) => when(a.lockedUntil, 'Unknown') },
              ]}
              rows={s.lockedAccounts}
              rowKey={(a) => a.email}
              empty={<p className="muted">No account is locked.</p>}
            />
          </section>

          <section className="stack" aria-labelledby="stale-title">
            <h2 id="stale-title">API keys not rotated in {s.keysNotRotated.olderThanDays} days</h2>
            <p className="muted">Keys in use for long are more likely to have leaked. Their owners rotate them under Settings, API keys.</p>
            <DataTable caption="API keys not rotated" columns={keyColumns({ header: 'Rotated', cell: (k) => when(k.rotatedAt) })} rows={s.keysNotRotated.items} rowKey={(k) => k.id}
              empty={<p className="muted">Every API key was created or rotated in the last {s.keysNotRotated.olderThanDays} days.</p>} />
            <Shown shown={s.keysNotRotated.items.length} total={s.keysNotRotated.total} />
          </section>

          <section className="stack" aria-labelledby="unused-title">
            <h2 id="unused-title">API keys never used</h2>
            <p className="muted">A key nobody uses can be revoked: it is a credential that only waits to leak.</p>
            <DataTable caption="API keys never used" columns={keyColumns({ header: 'Last used', cell: () => 'Never' })} rows={s.keysNeverUsed.items} rowKey={(k) => k.id}
              empty={<p className="muted">Every API key has been used.</p>} />
            <Shown shown={s.keysNeverUsed.items.length} total={s.keysNeverUsed.total} />
          </section>

          <section className="stack" aria-labelledby="service-keys-title">
            <h2 id="service-keys-title">Service role keys</h2>
            <p className="muted">They bypass every organization&apos;s row-level security: keep few, and revoke those not used.</p>
            <DataTable caption="Service role keys" columns={serviceKeyColumns} rows={s.serviceKeys.items} rowKey={(k) => k.id}
              empty={<p className="muted">No service role key exists.</p>} />
            <Shown shown={s.serviceKeys.items.length} total={s.serviceKeys.total} />
          </section>
        </>
      )}
    </>
  );
}
