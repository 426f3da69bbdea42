// Deploy, Models: the catalog beside the organization's own models, searched by words, task and a GPU type
// the model fits on (GET /v1/models/search). Each row leads to the model's page.
import type { FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import { DataTable, EmptyState, ErrorBanner, Field, PageHeader, Pager, SelectField, useApi, useCursorPages, type Column } from '../ui/index.ts';

type Model = Schemas['Model'];
type Task = NonNullable<Model['task']>;

export const TASKS: readonly { value: Task; label: string }[] = [
  { value: 'chat', label: 'Chat' },
  { value: 'completion', label: 'Completion' },
  { value: 'embedding', label: 'Embedding' },
];

const SOURCES: Record<Model['source'], string> = { catalog: 'Catalog', organization: 'Your organization', hub: 'Hugging Face' };

export const modelPath = (id: string) => `/models/${encodeURIComponent(id)}`;
export const parameters = (b: number | null) => (b === null ? 'Unknown' : `${b < 10 ? b.toFixed(1).replace(/\.0$/, '') : Math.round(b)}B`);
export const tokens = (n: number | null) => (n === null ? 'Unknown' : n >= 1024 ? `${Math.round(n / 1024)}K` : String(n));

export default function Models() {
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const task = (params.get('task') ?? '') as Task | '';
  const fitsGpu = params.get('fitsGpu') ?? '';
  const key = `${q}|${task}|${fitsGpu}`;
  const pages = useCursorPages(key);
  const { cursor } = pages;

  const gpus = useApi(() => ok(api.GET('/v1/gpu-types', { params: { query: { orgId: currentOrgId() } } })), []);
  const models = useApi(
    () => ok(api.GET('/v1/models/search', {
      params: { query: { orgId: currentOrgId(), limit: 25, ...(q ? { q } : {}), ...(task ? { task } : {}), ...(fitsGpu ? { fitsGpu: fitsGpu as never } : {}), ...(cursor ? { cursor } : {}) } },
    })),
    [q, task, fitsGpu, cursor],
  );

  const search = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    for (const name of ['q', 'task', 'fitsGpu']) {
      const value = String(form.get(name) ?? '').trim();
      if (value) next.set(name, value);
    }
    setParams(next);
  };

  const columns: Column<Model>[] = [
    {
      header: 'Model',
      cell: (m) => (
        <span className="stack-xs">
          <Link to={modelPath(m.id)}><strong>{m.displayName}</strong></Link>
          <code className="muted small">{m.id}</code>
        </span>
      ),
    },
    { header: 'Task', cell: (m) => (m.task ? TASKS.find((t) => t.value === m.task)?.label : 'Unknown') },
    { header: 'Parameters', numeric: true, cell: (m) => parameters(m.parametersBillion) },
    { header: 'Context', numeric: true, cell: (m) => tokens(m.contextLength) },
    { header: 'License', cell: (m) => m.license ?? 'Unknown' },
    { header: 'Source', cell: (m) => <span className={`badge badge-${m.source}`}>{SOURCES[m.source]}</span> },
  ];
  const rows = models.data?.data;
  const filtered = Boolean(q || task || fitsGpu);

  return (
    <>
      <PageHeader title="Models" description="Open models Kiln can deploy, and your organization's own. Filter by what you need, then open one to see the GPUs it needs and what it costs." />
      <section className="card" aria-labelledby="filter-title">
        <h2 id="filter-title" className="visually-hidden">Filter models</h2>
        <form role="search" aria-label="Models" onSubmit={search} className="filters" key={key}>
          <Field label="Search" name="q" type="search" defaultValue={q} placeholder="llama, qwen, mistral…" />
          <SelectField label="Task" name="task" defaultValue={task} options={[{ value: '', label: 'Any task' }, ...TASKS]} />
          <SelectField
            label="Fits on"
            name="fitsGpu"
            defaultValue={fitsGpu}
            disabled={!gpus.data}
            options={[{ value: '', label: 'Any GPU' }, ...(gpus.data ?? []).map((g) => ({ value: g.id, label: `${g.name} (${g.memoryGb} GB)` }))]}
          />
          <div className="filters-actions">
            <button type="submit" className="button button-primary">Search</button>
            {filtered && (
              <button type="button" className="button button-quiet" onClick={() => setParams(new URLSearchParams())}>
                Clear filters
              </button>
            )}
          </div>
        </form>
      </section>

      <section className="stack" aria-labelledby="results-title">
        <h2 id="results-title">{filtered ? 'Matching models' : 'All models'}</h2>
        <ErrorBanner error={models.error} onRetry={models.reload} />
        {!models.error && (
          <DataTable
            caption="Models"
            columns={columns}
            rows={rows}
            rowKey={(m) => m.id}
            empty={
              <EmptyState
                title="No model matches"
                action={filtered ? <button type="button" className="button" onClick={() => setParams(new URLSearchParams())}>Clear filters</button> : undefined}
              >
                Try fewer words, another task or a larger GPU.
              </EmptyState>
            }
          />
        )}
        <Pager pages={pages} pagination={models.data?.pagination} loading={models.loading} label="Model pages" />
      </section>
    </>
  );
}
