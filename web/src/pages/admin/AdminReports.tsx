// Administration, Reports: ask for a CSV report (customers, deployments or audit, over a window), and every
// report asked for, by any administrator, through this page or the API (GET /v1/admin/reports), newest first
// in cursor pages, filtered by kind and status in the address. Unfinished reports on the page are asked about
// again until the worker has written them; a ready one downloads with the session.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { api, ok, type Schemas } from '../../api.ts';
import {
  DataTable, EmptyState, ErrorBanner, Field, fieldErrors, PageHeader, Pager, saveFile, SelectField, StatusBadge, SubmitButton, useApi,
  useCursorPages, useSubmit, useToast, type Column,
} from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type Report = Schemas['Report'];
type Kind = Report['kind'];
type Status = Report['status'];

/** The kinds GenerateReportRequest takes, and what each holds (workflows/reports/store.ts). */
const KINDS: readonly { value: Kind; label: string; meaning: string }[] = [
  { value: 'customers', label: 'Customers', meaning: 'Every organization: plan, members, credits, and the requests made in the window.' },
  { value: 'deployments', label: 'Deployments', meaning: 'Deployments of every organization created in the window.' },
  { value: 'audit', label: 'Audit', meaning: 'Audit records of every organization written in the window.' },
];
const kindLabel = (kind: Kind) => KINDS.find((k) => k.value === kind)?.label ?? kind;

const STATUSES: readonly { value: Status; label: string }[] = [
  { value: 'pending', label: 'Pending' }, { value: 'running', label: 'Running' }, { value: 'ready', label: 'Ready' }, { value: 'failed', label: 'Failed' },
];
const TONE: Record<Status, 'busy' | 'ok' | 'bad'> = { pending: 'busy', running: 'busy', ready: 'ok', failed: 'bad' };
/** How often a page holding an unfinished report is asked for again. */
const POLL_MS = 2_000;
const PAGE_SIZE = 20;

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');
// A no-break space keeps the figure and its unit together in a narrow column.
const size = (bytes: number | null) => (bytes === null ? '—' : bytes < 1024 ? `${bytes}\u00a0B` : `${(bytes / 1024).toFixed(1)}\u00a0KB`);
/** A datetime-local value (the browser's time zone) as the ISO instant the API takes; undefined when empty. */
const instant = (value: FormDataEntryValue | null) => {
  const text = String(value ?? '').trim();
  return text ? new Date(text).toISOString() : undefined;
};

export default function AdminReports() {
  return <AdminOnly title="Reports"><Reports /></AdminOnly>;
}

function Reports() {
  const toast = useToast();
  const [params, setParams] = useSearchParams();
  const kind = KINDS.find((k) => k.value === params.get('kind'))?.value;
  const status = STATUSES.find((s) => s.value === params.get('status'))?.value;
  const filtered = Boolean(kind || status);
  // Asking for a report starts the list over at its first page, where the new report is.
  const [asked, setAsked] = useState(0);
  const key = `${params.toString()}|${asked}`;
  const pages = useCursorPages(key);
  const { cursor } = pages;
  const reports = useApi(() => ok(api.GET('/v1/admin/reports', {
    params: { query: { limit: PAGE_SIZE, ...(kind ? { kind } : {}), ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) } },
  })), [key, cursor]);
  const page = reports.data;

  // A page holding unfinished reports is asked for again until they are ready or failed; each one finishing is announced.
  const seen = useRef(new Map<string, Status>());
  useEffect(() => {
    if (!page) return;
    for (const r of page.data) {
      const before = seen.current.get(r.id);
      if (before && before !== r.status && r.status === 'ready') toast(`${kindLabel(r.kind)} report ready: ${r.rows ?? 0} row(s)`);
      if (before && before !== r.status && r.status === 'failed') toast(`${kindLabel(r.kind)} report failed: ${r.error ?? 'no reason given'}`, 'error');
      seen.current.set(r.id, r.status);
    }
    if (!page.data.some((r) => r.status === 'pending' || r.status === 'running')) return;
    const timer = setTimeout(reports.reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [page]);

  const generate = useSubmit();
  const create = generate.onSubmit(async (form) => {
    const report = await ok(api.POST('/v1/admin/reports/generate', {
      body: { kind: String(form.get('kind')) as Kind, from: instant(form.get('from')), to: instant(form.get('to')) },
    }));
    seen.current.set(report.id, report.status);
    // A filter could hide the new report: show them all again.
    if (filtered) setParams(new URLSearchParams());
    setAsked((n) => n + 1);
    toast(`${kindLabel(report.kind)} report asked for: it is being written`);
  });

  const applyFilters = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    for (const name of ['kind', 'status']) {
      const value = String(form.get(name) ?? '');
      if (value) next.set(name, value);
    }
    setParams(next);
  };
  const clearFilters = () => setParams(new URLSearchParams());

  const download = useSubmit();
  const save = (r: Report) => download.run(async () => {
    const blob = await ok(api.GET('/v1/admin/reports/{id}/download', { params: { path: { id: r.id } }, parseAs: 'blob' }));
    saveFile(blob, `${r.kind}-${r.id}.csv`);
  }, r.id);

  const columns: Column<Report>[] = [
    { header: 'Report', cell: (r) => <span className="stack-xs"><strong>{kindLabel(r.kind)}</strong><code className="muted small">{r.id}</code></span> },
    { header: 'Window', cell: (r) => `${r.from ? when(r.from) : 'The beginning'} – ${when(r.to)}` },
    {
      header: 'Status',
      cell: (r) => (
        <span className="stack-xs">
          <StatusBadge status={r.status} tone={TONE[r.status]} />
          {r.error && <span className="small">{r.error}</span>}
        </span>
      ),
    },
    { header: 'Rows', numeric: true, cell: (r) => r.rows ?? '—' },
    { header: 'Size', numeric: true, cell: (r) => size(r.bytes) },
    {
      header: 'Asked for',
      cell: (r) => (
        <span className="stack-xs">
          <time dateTime={r.createdAt}>{when(r.createdAt)}</time>
          {/* A deleted account leaves its id. */}
          <span className="muted small">by {r.requestedBy.email ?? <code>{r.requestedBy.id}</code>}</span>
        </span>
      ),
    },
    { header: 'Finished', cell: (r) => (r.completedAt ? <time dateTime={r.completedAt}>{when(r.completedAt)}</time> : '—') },
    {
      header: 'Actions',
      cell: (r) => (r.status === 'ready'
        ? (
          <button type="button" className="button" aria-label={`Download ${kindLabel(r.kind)} report ${r.id} as CSV`} disabled={download.pending === r.id} onClick={() => void save(r)}>
            {download.pending === r.id ? 'Downloading…' : 'Download CSV'}
          </button>
        )
        : <span className="muted small">{r.status === 'failed' ? 'Ask for it again' : 'When ready'}</span>),
    },
  ];
  const invalid = fieldErrors(reports.error);

  return (
    <>
      <PageHeader
        title="Reports"
        description="CSV files of the whole platform, written in the background by Kiln's worker: ask for one, then download it when it is ready."
        actions={<button type="button" className="button" onClick={reports.reload}>Refresh</button>}
      />

      <section className="card" aria-labelledby="generate-title">
        <h2 id="generate-title">Ask for a report</h2>
        <form className="stack" noValidate onSubmit={create}>
          <ErrorBanner error={generate.error} />
          <fieldset className="radio-group">
            <legend>Kind</legend>
            {KINDS.map((k, i) => (
              <label key={k.value} className="radio-option">
                <input type="radio" name="kind" value={k.value} defaultChecked={i === 0} />
                <span>
                  <strong>{k.label}</strong>
                  <span className="muted small block">{k.meaning}</span>
                </span>
              </label>
            ))}
          </fieldset>
          {generate.fields.kind && <p className="field-error">{generate.fields.kind}</p>}
          <div className="form-row">
            <Field label="From" name="from" type="datetime-local" hint="Included; empty: from the beginning. Your time zone." error={generate.fields.from} />
            <Field label="To" name="to" type="datetime-local" hint="Excluded; empty: now." error={generate.fields.to} />
          </div>
          <div><SubmitButton busy={generate.busy} busyLabel="Asking…">Generate report</SubmitButton></div>
        </form>
      </section>

      <section className="stack" aria-labelledby="reports-title">
        <h2 id="reports-title">Reports, newest first</h2>
        <p className="muted">Every report asked for on this Kiln, by any administrator, here or through the API.</p>
        <form role="search" aria-label="Reports" onSubmit={applyFilters} className="filters" key={params.toString()} noValidate>
          <SelectField label="Kind" name="kind" defaultValue={kind ?? ''} error={invalid.kind} options={[{ value: '', label: 'Any kind' }, ...KINDS.map((k) => ({ value: k.value, label: k.label }))]} />
          <SelectField label="Status" name="status" defaultValue={status ?? ''} error={invalid.status} options={[{ value: '', label: 'Any status' }, ...STATUSES]} />
          <div className="filters-actions">
            <button type="submit" className="button">Apply filters</button>
            {filtered && <button type="button" className="button button-quiet" onClick={clearFilters}>Clear filters</button>}
          </div>
        </form>
        <ErrorBanner error={reports.error} onRetry={reports.reload} />
        <ErrorBanner error={download.error} />
        {!reports.error && (
          <DataTable
            caption="Reports"
            columns={columns}
            rows={page?.data}
            rowKey={(r) => r.id}
            empty={filtered
              ? <EmptyState title="No report matches" action={<button type="button" className="button" onClick={clearFilters}>Clear filters</button>}>Choose another kind or status.</EmptyState>
              : <EmptyState title="No reports yet">Ask for one above; it appears here and is followed until it is ready.</EmptyState>}
          />
        )}
        <Pager pages={pages} pagination={page?.pagination} loading={reports.loading} label="Report pages" />
      </section>
    </>
  );
}
