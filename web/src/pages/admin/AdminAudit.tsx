// Administration, Audit log: every organization's audit trail (GET /v1/admin/audit), filtered by
// organization, actor (user or API key), action, resource and time, newest or oldest first, in cursor
// pages. The filters live in the address, so a filtered view can be shared and Back undoes a filter; a
// cell's link narrows the view to its organization, user, key or action. The platform-wide trail has no
// export route (only an organization's own, /v1/enterprise/audit/export), so the page offers none.
import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, ok, type Schemas } from '../../api.ts';
import { DataTable, EmptyState, ErrorBanner, Field, fieldErrors, PageHeader, Pager, SelectField, useApi, useCursorPages, type Column } from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type AuditRecord = Schemas['PlatformAuditRecord'];

/** The route's filters, named as its query parameters (and the address's). */
const TEXT_FILTERS = ['organizationId', 'userId', 'apiKeyId', 'action', 'resourceType', 'resourceId'] as const;
/** The filters a phone folds away until asked (the others answer most questions: who, what, when). */
const MORE_FILTERS = ['userId', 'apiKeyId', 'resourceType', 'resourceId'] as const;
const PAGE_SIZES = ['25', '50', '100'] as const;
const DEFAULT_PAGE_SIZE = '50';

/** An instant as a datetime-local input shows it: the browser's local time, to the minute. */
function localInput(iso: string): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return '';
  return new Date(time - new Date(time).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** A datetime-local value (local time) as the ISO instant the API takes; empty stays empty. */
function instant(local: string): string {
  const time = Date.parse(local);
  return Number.isNaN(time) ? '' : new Date(time).toISOString();
}

const statusBadge = (code: number) => (code >= 500 ? 'badge-firing' : code >= 400 ? 'badge-warning' : 'badge-success');

export default function AdminAudit() {
  return <AdminOnly title="Audit log"><AuditLog /></AdminOnly>;
}

function AuditLog() {
  const [params, setParams] = useSearchParams();
  const filters = Object.fromEntries(TEXT_FILTERS.map((name) => [name, params.get(name) ?? ''])) as Record<(typeof TEXT_FILTERS)[number], string>;
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  const oldestFirst = params.get('sort') === 'created_at';
  const limit = PAGE_SIZES.find((size) => size === params.get('limit')) ?? DEFAULT_PAGE_SIZE;
  const key = params.toString();
  const pages = useCursorPages(key);
  const { cursor } = pages;

  const records = useApi(() => {
    const query = {
      limit: Number(limit),
      ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value)),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
      ...(oldestFirst ? { sort: 'created_at' } : {}),
      ...(cursor ? { cursor } : {}),
    };
    return ok(api.GET('/v1/admin/audit', { params: { query } }));
  }, [key, cursor]);
  // Names for the organizations' ids, and suggestions for the organization filter; the page works without them.
  const organizations = useApi(() => ok(api.GET('/v1/admin/customers', { params: { query: { limit: 100 } } })), []);
  const names = new Map((organizations.data?.data ?? []).map((o) => [o.id, o.name]));

  const filtered = TEXT_FILTERS.some((name) => filters[name]) || Boolean(from || to);
  // On a phone the rarely used filters fold away behind a button (open when one of them is set); a laptop shows all.
  const extraSet = MORE_FILTERS.filter((name) => filters[name]).length + Number(oldestFirst) + Number(limit !== DEFAULT_PAGE_SIZE);
  const [moreShown, setMoreShown] = useState(extraSet > 0);
  const invalid = fieldErrors(records.error);
  const only = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    next.set(name, value);
    return `?${next.toString()}`;
  };
  const clear = () => {
    const next = new URLSearchParams();
    if (oldestFirst) next.set('sort', 'created_at');
    if (limit !== DEFAULT_PAGE_SIZE) next.set('limit', limit);
    setParams(next);
  };
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    for (const name of TEXT_FILTERS) {
      const value = String(form.get(name) ?? '').trim();
      if (value) next.set(name, value);
    }
    for (const name of ['from', 'to']) {
      const value = instant(String(form.get(name) ?? ''));
      if (value) next.set(name, value);
    }
    if (form.get('sort') === 'oldest') next.set('sort', 'created_at');
    const size = String(form.get('limit'));
    if (size !== DEFAULT_PAGE_SIZE) next.set('limit', size);
    setParams(next);
  };

  const columns: Column<AuditRecord>[] = [
    { header: 'Time', cell: (r) => <time dateTime={r.created_at}>{new Date(r.created_at).toLocaleString()}</time> },
    {
      header: 'Organization',
      cell: (r) => (
        <span className="stack-xs">
          <Link to={only('organizationId', r.organization_id)} title="Show only this organization's records">{names.get(r.organization_id) ?? r.organization_id}</Link>
          {names.has(r.organization_id) && <code className="muted small">{r.organization_id}</code>}
        </span>
      ),
    },
    {
      header: 'Actor',
      cell: (r) => (
        <span className="stack-xs">
          <Link to={only('userId', r.user_id)} title="Show only this user's records"><code>{r.user_id}</code></Link>
          {r.api_key_id && <span className="small">with key <Link to={only('apiKeyId', r.api_key_id)} title="Show only this key's records"><code>{r.api_key_id}</code></Link></span>}
        </span>
      ),
    },
    {
      header: 'Action',
      cell: (r) => (
        <span className="stack-xs">
          <Link to={only('action', r.action)} title="Show only this action"><code>{r.action}</code></Link>
          <span className="muted small">{r.resource_type}{r.resource_id ? ` ${r.resource_id}` : ''}</span>
        </span>
      ),
    },
    { header: 'Result', cell: (r) => <span className={`badge ${statusBadge(r.status_code)}`}>{r.status_code}</span> },
    { header: 'IP address', cell: (r) => <code className="small">{r.ip_address}</code> },
  ];
  const page = records.data;

  return (
    <>
      <PageHeader
        title="Audit log"
        description="Every organization's audited requests: each change, and every call made with an API key. Filter to find who did what, where and when."
        actions={<button type="button" className="button" onClick={records.reload}>Refresh</button>}
      />
      <section className="card" aria-labelledby="audit-filter-title">
        <h2 id="audit-filter-title" className="visually-hidden">Filter the audit log</h2>
        <form role="search" aria-label="Audit log" onSubmit={apply} className="filters" key={key} noValidate>
          <Field label="Organization" name="organizationId" defaultValue={filters.organizationId} list="audit-organizations" placeholder="org_…" autoComplete="off" error={invalid.organizationId} />
          <datalist id="audit-organizations">
            {(organizations.data?.data ?? []).map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
          </datalist>
          <Field label="Action" name="action" defaultValue={filters.action} placeholder="createApiKey" autoComplete="off" error={invalid.action} />
          <Field label="From" name="from" type="datetime-local" defaultValue={localInput(from)} error={invalid.from} />
          <Field label="To" name="to" type="datetime-local" defaultValue={localInput(to)} error={invalid.to} />
          <div id="audit-more-filters" className={moreShown || Object.keys(invalid).length ? 'filters-more filters-more-shown' : 'filters-more'}>
            <Field label="User" name="userId" defaultValue={filters.userId} placeholder="usr_…" autoComplete="off" error={invalid.userId} />
            <Field label="API key" name="apiKeyId" defaultValue={filters.apiKeyId} placeholder="key_…" autoComplete="off" error={invalid.apiKeyId} />
            <Field label="Resource type" name="resourceType" defaultValue={filters.resourceType} placeholder="deployment" autoComplete="off" error={invalid.resourceType} />
            <Field label="Resource id" name="resourceId" defaultValue={filters.resourceId} autoComplete="off" error={invalid.resourceId} />
            <SelectField label="Order" name="sort" defaultValue={oldestFirst ? 'oldest' : 'newest'} options={[{ value: 'newest', label: 'Newest first' }, { value: 'oldest', label: 'Oldest first' }]} />
            <SelectField label="Rows per page" name="limit" defaultValue={limit} options={PAGE_SIZES.map((size) => ({ value: size, label: size }))} />
          </div>
          <button type="button" className="button button-quiet filters-more-toggle" aria-expanded={moreShown} aria-controls="audit-more-filters" onClick={() => setMoreShown(!moreShown)}>
            {moreShown ? 'Fewer filters' : `More filters${extraSet ? ` (${extraSet} set)` : ''}`}
          </button>
          <div className="filters-actions">
            <button type="submit" className="button button-primary">Apply filters</button>
            {filtered && <button type="button" className="button button-quiet" onClick={clear}>Clear filters</button>}
          </div>
        </form>
        <p className="muted small">An action is the operation&apos;s id as the API reference names it (createApiKey, createDeploymentV1). From and To are in your local time: from at or after, to before.</p>
      </section>

      <section className="stack" aria-labelledby="audit-records-title">
        <h2 id="audit-records-title">{filtered ? 'Matching records' : 'All records'}</h2>
        <ErrorBanner error={records.error} onRetry={records.reload} />
        {!records.error && (
          <DataTable
            caption="Audit records"
            columns={columns}
            rows={page?.data}
            rowKey={(r) => r.id}
            empty={filtered
              ? <EmptyState title="No audit record matches" action={<button type="button" className="button" onClick={clear}>Clear filters</button>}>Widen the time range or remove a filter.</EmptyState>
              : <EmptyState title="No audit records yet">Records appear as organizations change things or call Kiln with API keys.</EmptyState>}
          />
        )}
        <Pager pages={pages} pagination={page?.pagination} loading={records.loading} label="Audit log pages" />
      </section>
    </>
  );
}
