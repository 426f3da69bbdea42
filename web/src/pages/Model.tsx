// A model's page: its facts and, per GPU type, the fewest GPUs a replica needs, its hourly price and a
// decoding speed band (GET /v1/models/{id}). The organization's own models are edited and removed here.
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import { ConfirmDialog, DataTable, ErrorBanner, Field, LoadingBlock, PageHeader, SubmitButton, useApi, useSubmit, useToast, type Column } from '../ui/index.ts';
import { modelPath, parameters, TASKS, tokens } from './Models.tsx';

type Details = Schemas['ModelDetails'];
type Hardware = Details['hardware'][number];

const usd = (n: number) => n.toLocaleString(undefined, { style: 'currency', currency: 'USD', minimumFractionDigits: 2 });

export default function Model() {
  const id = useParams().id ?? '';
  const navigate = useNavigate();
  const toast = useToast();
  const model = useApi(() => ok(api.GET('/v1/models/{id}', { params: { path: { id }, query: { orgId: currentOrgId() } } })), [id]);
  const gpus = useApi(() => ok(api.GET('/v1/gpu-types', { params: { query: { orgId: currentOrgId() } } })), []);
  const [deleting, setDeleting] = useState(false);
  const m = model.data;
  const gpuName = (gpu: string) => gpus.data?.find((g) => g.id === gpu)?.name ?? gpu;

  const columns: Column<Hardware>[] = [
    { header: 'GPU type', cell: (h) => <strong>{gpuName(h.gpu)}</strong> },
    { header: 'GPUs per replica', numeric: true, cell: (h) => h.gpusPerReplica ?? <span className="muted">More than 8</span> },
    { header: 'Price per hour', numeric: true, cell: (h) => (h.hourlyPriceUsd === null ? '—' : usd(h.hourlyPriceUsd)) },
    { header: 'Tokens/s per sequence', numeric: true, cell: (h) => (h.tokensPerSecond ? `${Math.round(h.tokensPerSecond.low)}–${Math.round(h.tokensPerSecond.high)}` : '—') },
  ];
  const fitting = m?.hardware.filter((h) => h.gpusPerReplica !== null).sort((a, b) => (a.hourlyPriceUsd ?? Infinity) - (b.hourlyPriceUsd ?? Infinity));
  const unfitting = m?.hardware.filter((h) => h.gpusPerReplica === null) ?? [];

  return (
    <>
      <PageHeader
        title={m?.displayName ?? 'Model'}
        description={m ? <code>{m.id}</code> : undefined}
        actions={m && <Link className="button button-primary" to={`/deployments/new?model=${encodeURIComponent(m.id)}`}>Deploy</Link>}
      />
      <p><Link to="/models">← All models</Link></p>
      <ErrorBanner error={model.error} onRetry={model.reload} />
      {!m && !model.error && <LoadingBlock lines={6} label="Loading the model" />}
      {m && (
        <>
          <section className="card" aria-labelledby="facts-title">
            <h2 id="facts-title">Facts</h2>
            {m.description && <p>{m.description}</p>}
            <dl className="facts">
              <Fact term="Source" value={m.source === 'catalog' ? 'Kiln catalog (read-only)' : m.source === 'organization' ? 'Your organization' : 'Hugging Face Hub'} />
              <Fact term="Task" value={m.task ? TASKS.find((t) => t.value === m.task)?.label : null} />
              <Fact term="Family" value={m.family} />
              <Fact term="Parameters" value={m.parametersBillion === null ? null : parameters(m.parametersBillion)} />
              <Fact term="Architecture" value={m.architecture} />
              <Fact term="Context length" value={m.contextLength === null ? null : `${tokens(m.contextLength)} tokens`} />
              <Fact term="Weights" value={m.dtype} />
              <Fact term="License" value={m.license} />
              <Fact term="Gated" value={m.gated === null ? null : m.gated ? 'Yes: downloads need a Hugging Face token' : 'No'} />
              {m.source === 'organization' && <Fact term="Default context" value={m.defaultContextLength ? `${m.defaultContextLength} tokens` : 'The model\'s own'} />}
              {m.source === 'organization' && <Fact term="Default vLLM arguments" value={m.defaultVllmArgs.length ? m.defaultVllmArgs.join(' ') : 'None'} />}
            </dl>
          </section>

          <section className="stack" aria-labelledby="hardware-title">
            <h2 id="hardware-title">Where it runs</h2>
            <p className="muted">
              For each GPU type: the fewest GPUs one replica needs at {m.hardware[0] ? `${tokens(m.hardware[0].contextLength)} tokens of context` : 'its context length'}, what that replica costs an hour, and how fast it decodes one sequence.
            </p>
            <DataTable
              caption="GPU types that hold the model"
              columns={columns}
              rows={fitting}
              rowKey={(h) => h.gpu}
              empty={<p className="muted">Kiln does not know this model&apos;s size or shape, so it cannot size it. Deploy it on a GPU you choose.</p>}
            />
            {unfitting.length > 0 && <p className="muted small">Too large for 8 GPUs of: {unfitting.map((h) => gpuName(h.gpu)).join(', ')}.</p>}
          </section>

          {m.source === 'organization' && (
            <>
              <EditModel model={m} onSaved={(saved) => { model.setData({ ...m, ...saved }); toast('Model saved'); }} />
              <section className="card danger-zone" aria-labelledby="remove-title">
                <h2 id="remove-title">Remove from your models</h2>
                <p className="muted">Deployments already running keep running; the model must not be in use by any of them.</p>
                <div>
                  <button type="button" className="button button-danger" onClick={() => setDeleting(true)}>Remove model</button>
                </div>
              </section>
            </>
          )}
        </>
      )}
      <ConfirmDialog
        open={deleting}
        title={`Remove “${m?.displayName ?? ''}”?`}
        confirmLabel="Remove model"
        onClose={() => setDeleting(false)}
        onConfirm={async () => {
          await ok(api.DELETE('/v1/models/{id}', { params: { path: { id } } }));
          toast(`“${m?.displayName ?? id}” removed from your models`);
          void navigate('/models');
        }}
      >
        <p>Its display name, description and defaults are forgotten. A deployment using it must be deleted first: Kiln refuses while one does.</p>
      </ConfirmDialog>
    </>
  );
}

function Fact({ term, value }: { term: string; value: string | null | undefined }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{value ?? <span className="muted">Unknown</span>}</dd>
    </div>
  );
}

function EditModel({ model, onSaved }: { model: Details; onSaved(saved: Schemas['Model']): void }) {
  const { busy, error, fields, onSubmit } = useSubmit();
  const save = onSubmit(async (form) => {
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const length = text('defaultContextLength');
    const saved = await ok(api.PATCH('/v1/models/{id}', {
      params: { path: { id: model.id } },
      body: {
        displayName: text('displayName') || null,
        description: text('description') || null,
        defaultVllmArgs: text('defaultVllmArgs').split(/\s+/).filter(Boolean),
        defaultContextLength: length ? Number(length) : null,
      },
    }));
    onSaved(saved);
  });
  return (
    <section className="card" aria-labelledby="edit-title">
      <h2 id="edit-title">Your organization&apos;s settings</h2>
      <form className="stack" noValidate onSubmit={save} key={modelPath(model.id)}>
        <ErrorBanner error={error} />
        <Field label="Display name" name="displayName" defaultValue={model.displayName} maxLength={200} hint="Empty: the model's own name." error={fields.displayName} />
        <Field label="Description" name="description" defaultValue={model.description ?? ''} maxLength={2000} error={fields.description} />
        <Field label="Default vLLM arguments" name="defaultVllmArgs" defaultValue={model.defaultVllmArgs.join(' ')} hint="Separated by spaces, e.g. --enable-prefix-caching --max-num-seqs=64." error={fields.defaultVllmArgs} />
        <Field label="Default context length" name="defaultContextLength" type="number" min={1} inputMode="numeric" defaultValue={model.defaultContextLength ?? ''} hint="Tokens; empty: the model's own." error={fields.defaultContextLength} />
        <div>
          <SubmitButton busy={busy} busyLabel="Saving…">Save</SubmitButton>
        </div>
      </form>
    </section>
  );
}
