// Deployments: the organization's deployments in cursor pages, kept current by the live socket (a status
// change patches its row; a creation or deletion reloads the pages shown). The cost per hour is worked out
// here from the GPU catalog's prices, as costs/ does, so a page of rows costs two requests, not one per row.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Link } from 'react-router';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import { useLiveEvents, type LiveEvent } from '../live.ts';
import { useMyRole } from '../permissions.ts';
import { DataTable, EmptyState, ErrorBanner, hourlyCents, money, PageHeader, StatusBadge, useApi, type Column } from '../ui/index.ts';

type Deployment = Schemas['Deployment'];
const PAGE_SIZE = 50;

interface Pages {
  rows: Deployment[];
  nextCursor: string | null;
}

export default function Deployments() {
  // A viewer reads the list; only roles that may deploy are offered New deployment.
  const canDeploy = useMyRole().can('deployments:write');
  const [pages, setPages] = useState<Pages>();
  const [error, setError] = useState<unknown>();
  const [loadingMore, setLoadingMore] = useState(false);
  // How many rows the user has paged to: a reload after a creation or deletion fetches as many again.
  const shown = useRef(PAGE_SIZE);
  const gpuTypes = useApi(() => ok(api.GET('/v1/gpu-types', { params: { query: { orgId: currentOrgId() } } })).catch(() => []), []);
  const prices = useMemo(() => new Map((gpuTypes.data ?? []).map((g) => [g.id, g.hourlyPriceUsd])), [gpuTypes.data]);

  const load = useCallback(async (cursor?: string) => {
    const { data, pagination } = await ok(api.GET('/api/deployments', { params: { query: { limit: cursor ? PAGE_SIZE : Math.min(shown.current, 100), cursor } } }));
    return { rows: data, nextCursor: pagination.hasMore ? pagination.nextCursor : null };
  }, []);

  const reload = useCallback(() => {
    load().then((first) => { setPages(first); setError(undefined); }, setError);
  }, [load]);
  useEffect(reload, [reload]);

  const more = async () => {
    if (!pages?.nextCursor) return;
    setLoadingMore(true);
    try {
      const next = await load(pages.nextCursor);
      shown.current = pages.rows.length + next.rows.length;
      setPages({ rows: [...pages.rows, ...next.rows.filter((r) => !pages.rows.some((p) => p.id === r.id))], nextCursor: next.nextCursor });
    } catch (e) {
      setError(e);
    } finally {
      setLoadingMore(false);
    }
  };

  const onEvent = (event: LiveEvent) => {
    const data = event.data ?? {};
    if (event.type === 'deployment.status' && event.deploymentId) {
      const status = String(data.status ?? '');
      setPages((current) => {
        if (!current) return current;
        if (status === 'deleted') return { ...current, rows: current.rows.filter((r) => r.id !== event.deploymentId) };
        return {
          ...current,
          rows: current.rows.map((r) => (r.id === event.deploymentId
            ? { ...r, status: status as Deployment['status'], currentReplicas: typeof data.replicas === 'number' ? data.replicas : r.currentReplicas }
            : r)),
        };
      });
    } else if (event.type === 'deployment.created' || event.type === 'deployment.deleted' || event.type === 'deployment.scaled') reload();
  };
  useLiveEvents({ types: ['deployment'], onEvent, onResync: reload });

  const columns: Column<Deployment>[] = [
    { header: 'Name', cell: (d) => <Link to={`/deployments/${d.id}`}><strong>{d.name}</strong></Link> },
    { header: 'Model', cell: (d) => <code>{d.model}</code> },
    { header: 'Status', cell: (d) => <StatusBadge status={d.status} /> },
    {
      header: 'Replicas', numeric: true,
      cell: (d) => (
        <span title={`Autoscaled between ${d.minReplicas} and ${d.maxReplicas}`}>
          {d.currentReplicas}/{d.replicas} <span className="muted small">({d.minReplicas}–{d.maxReplicas})</span>
        </span>
      ),
    },
    { header: 'GPU', cell: (d) => `${d.gpusPerReplica} × ${d.gpuType}` },
    { header: 'Cost / hour', numeric: true, cell: (d) => money(hourlyCents(prices.get(d.gpu), d.gpusPerReplica, d.currentReplicas)) },
    { header: 'Created', cell: (d) => <time dateTime={d.createdAt}>{new Date(d.createdAt).toLocaleString()}</time> },
  ];

  return (
    <>
      <PageHeader
        title="Deployments"
        description="Your organization's models serving on GPUs. Status changes show here as they happen."
        actions={canDeploy && <Link className="button button-primary" to="/deployments/new">New deployment</Link>}
      />
      <ErrorBanner error={error} onRetry={reload} />
      {!error || pages ? (
        <DataTable
          caption="Deployments"
          columns={columns}
          rows={pages?.rows}
          rowKey={(d) => d.id}
          empty={(
            <EmptyState title="No deployments yet" action={canDeploy && <Link className="button button-primary" to="/deployments/new">New deployment</Link>}>
              Deploy a model from the catalog or a template; it runs on Kiln's GPUs and answers at its own endpoint.
            </EmptyState>
          )}
        />
      ) : null}
      {pages?.nextCursor && (
        <div>
          <button type="button" className="button" onClick={() => void more()} disabled={loadingMore}>
            {loadingMore ? 'Loading…' : `Show ${PAGE_SIZE} more`}
          </button>
        </div>
      )}
    </>
  );
}
