// Administration, Reports: ask for a CSV report (customers, deployments or audit, over a window), follow its
// status until the worker has written it, then download it. Kiln has no route listing reports, so the page
// remembers the ids asked for in this browser (and takes any other report's id).
import { useEffect, useRef, useState } from 'react';
import { api, KilnError, ok, type Schemas } from '../../api.ts';
import {
  DataTable, EmptyState, ErrorBanner, Field, PageHeader, saveFile, StatusBadge, SubmitButton, useApi, useSubmit, useToast, type Column,
} from '../../ui/index.ts';
import { AdminOnly } from './AdminOnly.tsx';

type Report = Schemas['Report'];
type Kind = Report['kind'];

/** The kinds GenerateReportRequest takes, and what each holds (workflows/reports/store.ts). */
const KINDS: readonly { value: Kind; label: string; meaning: string }[] = [
  { value: 'customers', label: 'Customers', meaning: 'Every organization: plan, members, credits, and the requests made in the window.' },
  { value: 'deployments', label: 'Deployments', meaning: 'Deployments of every organization created in the window.' },
  { value: 'audit', label: 'Audit', meaning: 'Audit records of every organization written in the window.' },
];
const kindLabel = (kind: Kind) => KINDS.find((k) => k.value === kind)?.label ?? kind;

const TONE: Record<Report['status'], 'busy' | 'ok' | 'bad'> = { pending: 'busy', running: 'busy', ready: 'ok', failed: 'bad' };
/** How often an unfinished report is asked about again. */
const POLL_MS = 2_000;

/** The report ids this browser asked for, newest first (no route lists reports). */
const STORE_KEY = 'kiln.admin.reports';
const MAX_KEPT = 20;
function keptIds(): string[] {
  try {
    const ids: unknown = JSON.parse(localStorage.getItem(STORE_KEY) ?? '[]');
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}
function keepIds(ids: readonly string[]): void {
  localStorage.setItem(STORE_KEY, JSON.stringify(ids.slice(0, MAX_KEPT)));
}

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
  const [ids, setIds] = useState<string[]>(keptIds);
  const remember = (id: string) => setIds((list) => {
    const next = [id, ...list.filter((x) => x !== id)].slice(0, MAX_KEPT);
    keepIds(next);
    return next;
  });

  // Reports deleted with their database (another Kiln, a reset) answer 404: they are dropped from the list.
  const reports = useApi(async () => {
    const found = await Promise.all(ids.map((id) => ok(api.GET('/v1/admin/reports/{id}', { params: { path: { id } } })).catch((e: unknown) => {
      if (e instanceof KilnError && e.statusCode === 404) return undefined;
      throw e;
    })));
    return found.filter((r): r is Report => r !== undefined);
  }, [ids]);

  // Unfinished reports are asked about again until they are ready or failed; each one finishing is announced.
  const seen = useRef(new Map<string, Report['status']>());
  useEffect(() => {
    const list = reports.data;
    if (!list) return;
    for (const r of list) {
      const before = seen.current.get(r.id);
      if (before && before !== r.status && r.status === 'ready') toast(`${kindLabel(r.kind)} report ready: ${r.rows ?? 0} row(s)`);
      if (before && before !== r.status && r.status === 'failed') toast(`${kindLabel(r.kind)} report failed: ${r.error ?? 'no reason given'}`, 'error');
      seen.current.set(r.id, r.status);
    }
    if (!list.some((r) => r.status === 'pending' || r.status === 'running')) return;
    const timer = setTimeout(reports.reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [reports.data]);

  const generate = useSubmit();
  const create = generate.onSubmit(async (form) => {
    const report = await ok(api.POST('/v1/admin/reports/generate', {
      body: { kind: String(form.get('kind')) as Kind, from: instant(form.get('from')), to: instant(form.get('to')) },
    }));
    seen.current.set(report.id, report.status);
    remember(report.id);
    toast(`${kindLabel(report.kind)} report asked for: it is being written`);
  });

  const lookUp = useSubmit();
  const find = lookUp.onSubmit(async (form, formElement) => {
    const id = String(form.get('id') ?? '').trim();
    if (!id) return;
    const report = await ok(api.GET('/v1/admin/reports/{id}', { params: { path: { id } } }));
    seen.current.set(report.id, report.status);
    remember(report.id);
    formElement.reset();
  });

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
    { header: 'Asked for', cell: (r) => when(r.createdAt) },
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

  return (
    <>
      <PageHeader title="Reports" description="CSV files of the whole platform, written in the background by Kiln's worker: ask for one, then download it when it is ready." />

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
        <h2 id="reports-title">Reports asked for here</h2>
        <p className="muted">Kiln lists no reports: this browser remembers the last {MAX_KEPT} asked for from it. A report asked for elsewhere (the API, another browser) is shown by its id.</p>
        <ErrorBanner error={reports.error} onRetry={reports.reload} />
        <ErrorBanner error={download.error} />
        {!reports.error && (
          <DataTable
            caption="Reports"
            columns={columns}
            rows={reports.data}
            rowKey={(r) => r.id}
            empty={<EmptyState title="No reports yet">Ask for one above; it appears here and is followed until it is ready.</EmptyState>}
          />
        )}
        <form className="inline-form" noValidate onSubmit={find}>
          <Field label="Report id" name="id" required placeholder="rpt_…" error={lookUp.fields.id} />
          <SubmitButton busy={lookUp.busy} busyLabel="Looking…" className="button">Show report</SubmitButton>
        </form>
        <ErrorBanner error={lookUp.error} />
      </section>
    </>
  );
}
