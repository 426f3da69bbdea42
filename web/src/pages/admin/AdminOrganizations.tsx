// Administration, Organizations: every organization with its plan, members, deployments and usage.
import { api, ok, type Schemas } from '../../api.ts';
import { DataTable, ErrorBanner, PageHeader, Pager, useApi, useCursorPages, type Column } from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type Customer = Schemas['AdminCustomer'];

export default function AdminOrganizations() {
  return <AdminOnly title="Organizations"><Organizations /></AdminOnly>;
}

function Organizations() {
  const pages = useCursorPages();
  const { cursor } = pages;
  const page = useApi(() => ok(api.GET('/v1/admin/customers', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } })), [cursor]);
  const columns: Column<Customer>[] = [
    { header: 'Organization', cell: (c) => <span className="stack-xs"><strong>{c.name}</strong><code className="muted small">{c.id}</code></span> },
    { header: 'Plan', cell: (c) => c.plan },
    { header: 'Members', numeric: true, cell: (c) => c.members },
    { header: 'Deployments', numeric: true, cell: (c) => c.deployments.total },
    { header: 'Requests (30 days)', numeric: true, cell: (c) => c.usage.requestsLast30Days.toLocaleString() },
    { header: 'Credits', numeric: true, cell: (c) => (c.usage.creditsCents / 100).toLocaleString(undefined, { style: 'currency', currency: 'USD' }) },
    { header: 'Last active', cell: (c) => (c.usage.lastActivityAt ? new Date(c.usage.lastActivityAt).toLocaleDateString() : 'Never') },
  ];
  return (
    <>
      <PageHeader title="Organizations" description="Every organization on this Kiln, newest first." />
      <ErrorBanner error={page.error} onRetry={page.reload} />
      {!page.error && <DataTable caption="Organizations" columns={columns} rows={page.data?.data} rowKey={(c) => c.id} />}
      <Pager pages={pages} pagination={page.data?.pagination} loading={page.loading} label="Organization pages" />
    </>
  );
}
