// Administration, Operations: deployments of every organization by status, the failed ones with their
// reason and what their workflow is retrying, and the provisioning circuits that are open (reset here).
import { useState } from 'react';
import { api, ok, type Schemas } from '../../api.ts';
import { ConfirmDialog, DataTable, ErrorBanner, LoadingBlock, PageHeader, useApi, useToast, type Column } from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type Operations = Schemas['AdminOperations'];
type Failed = Operations['failedWorkflows'][number];
type Circuit = Schemas['Circuit'];

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

export default function AdminOperations() {
  return <AdminOnly title="Operations"><Operations /></AdminOnly>;
}

function Operations() {
  const toast = useToast();
  const ops = useApi(() => ok(api.GET('/v1/admin/operations')), []);
  const [resetting, setResetting] = useState<Circuit>();
  const o = ops.data;

  const failedColumns: Column<Failed>[] = [
    { header: 'Deployment', cell: (f) => <span className="stack-xs"><strong>{f.name}</strong><code className="muted small">{f.deploymentId}</code></span> },
    { header: 'Organization', cell: (f) => <span className="stack-xs">{f.organizationName}<code className="muted small">{f.organizationId}</code></span> },
    { header: 'Reason', cell: (f) => f.failureReason ?? <span className="muted">None recorded</span> },
    {
      header: 'Workflow',
      cell: (f) => (
        <span className="stack-xs">
          {f.workflow
            ? `${f.workflow.status}${f.workflow.pendingActivities.length ? `: ${f.workflow.pendingActivities.map((a) => `${a.activity} (attempt ${a.attempt})`).join(', ')}` : ''}`
            : <span className="muted">Unknown</span>}
          {f.workflowUrl && <a href={f.workflowUrl} target="_blank" rel="noreferrer">Open in Temporal</a>}
        </span>
      ),
    },
    { header: 'Failed', cell: (f) => when(f.failedAt) },
  ];
  const circuitColumns: Column<Circuit>[] = [
    { header: 'Provider', cell: (c) => <code>{c.provider}</code> },
    { header: 'GPU type', cell: (c) => c.gpuType },
    { header: 'State', cell: (c) => <span className={`badge badge-${c.state === 'open' ? 'firing' : 'pending'}`}>{c.state.replace('_', '-')}</span> },
    { header: 'Failures', numeric: true, cell: (c) => c.failures },
    { header: 'Last failure', cell: (c) => c.lastFailure ?? '—' },
    { header: 'Half-opens', cell: (c) => when(c.halfOpensAt) },
    { header: 'Actions', cell: (c) => <button type="button" className="button" aria-label={`Reset ${c.provider} ${c.gpuType}`} onClick={() => setResetting(c)}>Reset</button> },
  ];

  return (
    <>
      <PageHeader title="Operations" description="Every organization's deployments, what failed and why, and the provisioning circuits holding creation back." />
      <ErrorBanner error={ops.error} onRetry={ops.reload} />
      {!o && !ops.error && <LoadingBlock lines={6} label="Loading operations" />}
      {o && (
        <>
          <section className="card" aria-labelledby="status-title">
            <h2 id="status-title">Deployments by status</h2>
            <dl className="facts">
              <div><dt>All</dt><dd><strong>{o.deployments.total}</strong></dd></div>
              {Object.entries(o.deployments.byStatus).filter(([, n]) => n > 0).map(([status, n]) => (
                <div key={status}><dt>{status.replaceAll('_', ' ')}</dt><dd>{n}</dd></div>
              ))}
            </dl>
          </section>
          <section className="stack" aria-labelledby="circuits-title">
            <h2 id="circuits-title">Open circuits</h2>
            <p className="muted">After repeated failed provisioning, Kiln stops placing deployments on a provider&apos;s GPU type for a while. Reset one once its cause is fixed.</p>
            <DataTable caption="Open circuits" columns={circuitColumns} rows={o.openCircuits} rowKey={(c) => `${c.provider}/${c.gpuType}`}
              empty={<p className="muted">No circuit is open: provisioning is flowing everywhere.</p>} />
          </section>
          <section className="stack" aria-labelledby="failed-title">
            <h2 id="failed-title">Failed deployments</h2>
            <DataTable caption="Failed deployments" columns={failedColumns} rows={o.failedWorkflows} rowKey={(f) => f.deploymentId}
              empty={<p className="muted">No deployment has failed.</p>} />
          </section>
        </>
      )}
      <ConfirmDialog
        open={!!resetting}
        destructive={false}
        title={`Reset the circuit of ${resetting?.provider ?? ''} ${resetting?.gpuType ?? ''}?`}
        confirmLabel="Reset circuit"
        onClose={() => setResetting(undefined)}
        onConfirm={async () => {
          if (!resetting) return;
          await ok(api.POST('/v1/recovery/circuits', { body: { provider: resetting.provider as never, gpuType: resetting.gpuType as never, action: 'reset' } }));
          toast(`Circuit of ${resetting.provider} ${resetting.gpuType} reset`);
          ops.reload();
        }}
      >
        <p>Its failures are forgotten and deployments are placed there again at once, for every organization. If the cause is not fixed, it opens again after more failures.</p>
      </ConfirmDialog>
    </>
  );
}
