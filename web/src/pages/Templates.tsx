// Deploy, Templates: catalog presets and the organization's templates, starred ones first (GET
// /v1/templates/deploy); star and unstar; create a template (its first version).
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import { DataTable, EmptyState, ErrorBanner, Field, PageHeader, SelectField, SubmitButton, useApi, useSubmit, useToast, type Column } from '../ui/index.ts';

type Template = Schemas['Template'];

export const templatePath = (id: string) => `/templates/${encodeURIComponent(id)}`;

/** Stars or unstars; answers the template's new star state. */
export async function toggleStar(template: Pick<Template, 'id' | 'starred'>) {
  const params = { path: { id: template.id } };
  return template.starred ? ok(api.DELETE('/v1/templates/{id}/star', { params })) : ok(api.POST('/v1/templates/{id}/star', { params, body: {} }));
}

export function StarButton({ template, onChange }: { template: Pick<Template, 'id' | 'name' | 'starred' | 'stars'>; onChange(star: Schemas['TemplateStar']): void }) {
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className={template.starred ? 'button star star-on' : 'button star'}
      aria-pressed={template.starred}
      aria-label={`Star ${template.name}`}
      disabled={busy}
      onClick={() => {
        setBusy(true);
        toggleStar(template).then(onChange, (e: unknown) => toast(e instanceof Error ? e.message : 'The star was not saved', 'error')).finally(() => setBusy(false));
      }}
    >
      <span aria-hidden="true">{template.starred ? '★' : '☆'}</span> {template.stars}
    </button>
  );
}

export const configurationSummary = (c: Template['configuration']) =>
  `${c.replicas === c.maxReplicas ? `${c.replicas} replica${c.replicas === 1 ? '' : 's'}` : `${c.minReplicas}–${c.maxReplicas} replicas`} × ${c.gpusPerReplica} ${c.gpu}`;

export default function Templates() {
  const templates = useApi(() => ok(api.GET('/v1/templates/deploy', { params: { query: { orgId: currentOrgId(), limit: 100 } } })), []);
  const [creating, setCreating] = useState(false);

  const replace = (star: Schemas['TemplateStar']) =>
    templates.setData((page) => page && { ...page, data: page.data.map((t) => (t.id === star.templateId ? { ...t, starred: star.starred, stars: star.stars } : t)) });

  const columns: Column<Template>[] = [
    {
      header: 'Template',
      cell: (t) => (
        <span className="stack-xs">
          <Link to={templatePath(t.id)}><strong>{t.name}</strong></Link>
          {t.description && <span className="muted small">{t.description}</span>}
        </span>
      ),
    },
    { header: 'Model', cell: (t) => <code className="small">{t.configuration.model}</code> },
    { header: 'Runs on', cell: (t) => configurationSummary(t.configuration) },
    { header: 'From', cell: (t) => (t.source === 'catalog' ? 'Kiln catalog' : t.owned ? `Yours (${t.visibility})` : 'Public') },
    { header: 'Version', numeric: true, cell: (t) => `v${t.latestVersion}` },
    { header: 'Stars', cell: (t) => <StarButton template={t} onChange={replace} /> },
    { header: 'Actions', cell: (t) => <Link className="button" to={`/deployments/new?template=${encodeURIComponent(t.id)}`} aria-label={`Deploy ${t.name}`}>Deploy</Link> },
  ];

  return (
    <>
      <PageHeader
        title="Templates"
        description="Ready-made deployments: a model, its GPUs and its settings, versioned. Star the ones you use to keep them first and hear of their new versions."
        actions={!creating && <button type="button" className="button button-primary" onClick={() => setCreating(true)}>New template</button>}
      />
      {creating && <CreateTemplate onClose={() => setCreating(false)} />}
      <section className="stack" aria-labelledby="list-title">
        <h2 id="list-title">Templates you can deploy</h2>
        <ErrorBanner error={templates.error} onRetry={templates.reload} />
        {!templates.error && (
          <DataTable
            caption="Templates"
            columns={columns}
            rows={templates.data?.data}
            rowKey={(t) => t.id}
            empty={<EmptyState title="No templates yet">Create one from the button above, or from a deployment you like.</EmptyState>}
          />
        )}
      </section>
    </>
  );
}

function CreateTemplate({ onClose }: { onClose(): void }) {
  const navigate = useNavigate();
  const toast = useToast();
  const gpus = useApi(() => ok(api.GET('/v1/gpu-types', { params: { query: { orgId: currentOrgId() } } })), []);
  const { busy, error, fields, onSubmit } = useSubmit();
  const create = onSubmit(async (form) => {
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const replicas = text('replicas');
    const created = await ok(api.POST('/v1/templates/deploy', {
      body: {
        name: text('name'),
        description: text('description'),
        visibility: text('visibility') as Template['visibility'],
        configuration: { model: text('model'), gpu: text('gpu') as never, ...(replicas ? { replicas: Number(replicas) } : {}) },
        ...(text('notes') ? { notes: text('notes') } : {}),
      },
    }));
    toast(`Template “${created.name}” created`);
    void navigate(templatePath(created.id));
  });
  return (
    <section className="card" aria-labelledby="new-title">
      <h2 id="new-title">New template</h2>
      <form className="stack" noValidate onSubmit={create}>
        <ErrorBanner error={error} />
        <Field label="Name" name="name" required maxLength={100} error={fields.name} />
        <Field label="Description" name="description" maxLength={2000} hint="What it is for." error={fields.description} />
        <Field label="Model" name="model" required placeholder="meta-llama/Llama-3.1-8B-Instruct" hint="A Hugging Face id, or an s3://, gs:// or pvc:// location." error={fields['configuration.model'] ?? fields.model} />
        <SelectField
          label="GPU type"
          name="gpu"
          disabled={!gpus.data}
          options={(gpus.data ?? []).map((g) => ({ value: g.id, label: `${g.name} (${g.memoryGb} GB)` }))}
          error={fields['configuration.gpu'] ?? fields.gpu}
        />
        <Field label="Replicas" name="replicas" type="number" min={1} inputMode="numeric" hint="Empty: one." error={fields['configuration.replicas'] ?? fields.replicas} />
        <SelectField label="Visibility" name="visibility" options={[{ value: 'private', label: 'Private: your organization only' }, { value: 'public', label: 'Public: everyone may deploy it' }]} />
        <Field label="Notes" name="notes" maxLength={2000} hint="What this first version is, in your words." error={fields.notes} />
        <div className="row">
          <SubmitButton busy={busy} busyLabel="Creating…">Create template</SubmitButton>
          <button type="button" className="button button-quiet" onClick={onClose}>Cancel</button>
        </div>
      </form>
    </section>
  );
}
