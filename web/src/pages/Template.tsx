// A template's page: what its latest version deploys and costs, its versions newest first, a new version
// (the way a template is edited: versions are kept), star, Deploy, and deleting one of the organization's own.
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import { useMyRole } from '../permissions.ts';
import { ConfirmDialog, DataTable, ErrorBanner, Field, LoadingBlock, PageHeader, SelectField, SubmitButton, useApi, useSubmit, useToast, type Column } from '../ui/index.ts';
import { configurationSummary, StarButton } from './Templates.tsx';

type Template = Schemas['Template'];
type Version = Schemas['TemplateVersion'];

/** There is no GET of one template: its row is found in the list of templates the caller may deploy. */
async function findTemplate(id: string): Promise<Template | undefined> {
  let cursor: string | undefined;
  for (;;) {
    const page = await ok(api.GET('/v1/templates/deploy', { params: { query: { orgId: currentOrgId(), limit: 100, ...(cursor ? { cursor } : {}) } } }));
    const found = page.data.find((t) => t.id === id);
    if (found || !page.pagination.hasMore || !page.pagination.nextCursor) return found;
    cursor = page.pagination.nextCursor;
  }
}

const usd = (n: number) => n.toLocaleString(undefined, { style: 'currency', currency: 'USD', minimumFractionDigits: 2 });

export default function TemplatePage() {
  const id = useParams().id ?? '';
  const toast = useToast();
  const template = useApi(() => findTemplate(id), [id]);
  const versions = useApi(() => ok(api.GET('/v1/templates/{id}/versions', { params: { path: { id }, query: { limit: 100 } } })), [id]);
  const preview = useApi(() => ok(api.GET('/v1/templates/{id}/deploy', { params: { path: { id }, query: { orgId: currentOrgId() } } })), [id]);
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const navigate = useNavigate();
  const me = useMyRole();
  const t = template.data;

  const columns: Column<Version>[] = [
    { header: 'Version', cell: (v) => <strong>v{v.version}</strong> },
    { header: 'Model', cell: (v) => <code className="small">{v.configuration.model}</code> },
    { header: 'Runs on', cell: (v) => configurationSummary(v.configuration) },
    { header: 'Context', numeric: true, cell: (v) => v.configuration.contextLength ?? 'Model\'s own' },
    { header: 'Notes', cell: (v) => v.notes ?? <span className="muted">None</span> },
    { header: 'Created', cell: (v) => (v.createdAt ? new Date(v.createdAt).toLocaleString() : 'With Kiln') },
  ];

  if (template.data === undefined && !template.loading && !template.error) {
    return (
      <>
        <PageHeader title="Template not found" />
        <p className="muted">No template you can see has this id: it may be private to another organization. <Link to="/templates">Back to templates</Link></p>
      </>
    );
  }
  return (
    <>
      <PageHeader
        title={t?.name ?? 'Template'}
        description={t?.description || undefined}
        actions={t && (
          <>
            <StarButton template={t} onChange={(star) => template.setData({ ...t, starred: star.starred, stars: star.stars })} />
            <Link className="button button-primary" to={`/deployments/new?template=${encodeURIComponent(t.id)}`}>Deploy</Link>
          </>
        )}
      />
      <p><Link to="/templates">← All templates</Link></p>
      <ErrorBanner error={template.error} onRetry={template.reload} />
      {!t && !template.error && <LoadingBlock lines={5} label="Loading the template" />}
      {t && (
        <section className="card" aria-labelledby="latest-title">
          <h2 id="latest-title">Version {t.latestVersion}: what it deploys</h2>
          <dl className="facts">
            <div><dt>Model</dt><dd><code>{t.configuration.model}</code></dd></div>
            <div><dt>GPUs</dt><dd>{configurationSummary(t.configuration)}</dd></div>
            <div><dt>Context length</dt><dd>{t.configuration.contextLength ?? 'The model\'s own'}</dd></div>
            <div><dt>Weights</dt><dd>{t.configuration.dtype}</dd></div>
            <div><dt>vLLM arguments</dt><dd>{t.configuration.vllmArgs.join(' ') || 'None'}</dd></div>
            <div><dt>From</dt><dd>{t.source === 'catalog' ? 'Kiln catalog' : t.owned ? `Your organization (${t.visibility})` : 'Another organization (public)'}</dd></div>
            <div>
              <dt>Cost per hour</dt>
              <dd>{preview.data ? `${usd(preview.data.hourlyCostUsd)}${preview.data.maxHourlyCostUsd !== preview.data.hourlyCostUsd ? `, up to ${usd(preview.data.maxHourlyCostUsd)}` : ''}` : preview.error ? 'Unknown' : '…'}</dd>
            </div>
          </dl>
          {preview.data && !preview.data.credits.sufficient && (
            <p className="muted">Deploying it needs {usd(preview.data.credits.requiredCents / 100)} of credits; you have {usd(preview.data.credits.availableCents / 100)}.</p>
          )}
          {t.owned && !editing && (
            <div><button type="button" className="button" onClick={() => setEditing(true)}>New version</button></div>
          )}
        </section>
      )}
      {t && editing && (
        <NewVersion
          template={t}
          onClose={() => setEditing(false)}
          onCreated={(v) => {
            toast(`Version ${v.version} of “${t.name}” saved`);
            setEditing(false);
            template.reload();
            versions.reload();
            preview.reload();
          }}
        />
      )}
      <section className="stack" aria-labelledby="versions-title">
        <h2 id="versions-title">Versions</h2>
        <ErrorBanner error={versions.error} onRetry={versions.reload} />
        {!versions.error && <DataTable caption="Versions" columns={columns} rows={versions.data?.data} rowKey={(v) => String(v.version)} />}
      </section>
      {t?.owned && me.can('templates:write') && (
        <section className="card danger-zone" aria-labelledby="delete-title">
          <h2 id="delete-title">Delete this template</h2>
          <p className="muted">Deployments made from it keep running as they are; it can no longer be deployed, and nobody hears of it again.</p>
          <div>
            <button type="button" className="button button-danger" onClick={() => setDeleting(true)}>Delete template</button>
          </div>
        </section>
      )}
      <ConfirmDialog
        open={deleting}
        title={`Delete the template “${t?.name ?? ''}”?`}
        confirmLabel="Delete template"
        onClose={() => setDeleting(false)}
        onConfirm={async () => {
          await ok(api.DELETE('/v1/templates/{id}', { params: { path: { id } } }));
          toast(`Template “${t?.name ?? id}” deleted`);
          void navigate('/templates');
        }}
      >
        <p>
          Its {t?.latestVersion === 1 ? 'version goes' : `${t?.latestVersion ?? ''} versions go`} with it, and so do its stars and
          {t?.visibility === 'public' ? ' everyone\'s' : ''} subscriptions to its updates. Deployments made from it keep their configuration and keep running.
        </p>
      </ConfirmDialog>
    </>
  );
}

function NewVersion({ template, onClose, onCreated }: { template: Template; onClose(): void; onCreated(v: Version): void }) {
  const gpus = useApi(() => ok(api.GET('/v1/gpu-types', { params: { query: { orgId: currentOrgId() } } })), []);
  const { busy, error, fields, onSubmit } = useSubmit();
  const c = template.configuration;
  const save = onSubmit(async (form) => {
    const text = (name: string) => String(form.get(name) ?? '').trim();
    // Only what changed is sent: the rest keeps the latest version's values.
    const configuration: Schemas['TemplateConfigurationChange'] = {};
    if (text('model') !== c.model) configuration.model = text('model');
    if (text('gpu') !== c.gpu) configuration.gpu = text('gpu') as never;
    for (const field of ['replicas', 'minReplicas', 'maxReplicas'] as const) {
      if (Number(text(field)) !== c[field]) configuration[field] = Number(text(field));
    }
    const version = await ok(api.POST('/v1/templates/{id}/new-version', {
      params: { path: { id: template.id } },
      body: { configuration, ...(text('notes') ? { notes: text('notes') } : {}) },
    }));
    onCreated(version);
  });
  return (
    <section className="card" aria-labelledby="version-title">
      <h2 id="version-title">New version of “{template.name}”</h2>
      <p className="muted">Earlier versions stay; deployments made from them keep running them until you upgrade them.</p>
      <form className="stack" noValidate onSubmit={save}>
        <ErrorBanner error={error} />
        <Field label="Model" name="model" defaultValue={c.model} required error={fields['configuration.model'] ?? fields.model} />
        <SelectField
          label="GPU type"
          name="gpu"
          defaultValue={c.gpu}
          key={gpus.data ? 'gpus' : 'loading'}
          options={gpus.data ? gpus.data.map((g) => ({ value: g.id, label: `${g.name} (${g.memoryGb} GB)` })) : [{ value: c.gpu, label: c.gpu }]}
          error={fields['configuration.gpu'] ?? fields.gpu}
        />
        <Field label="Replicas" name="replicas" type="number" min={0} defaultValue={c.replicas} inputMode="numeric" hint="How many start." error={fields['configuration.replicas'] ?? fields.replicas} />
        <Field label="Minimum replicas" name="minReplicas" type="number" min={0} defaultValue={c.minReplicas} inputMode="numeric" hint="Autoscaling never goes below; 0 lets it scale to zero." error={fields['configuration.minReplicas'] ?? fields.minReplicas} />
        <Field label="Maximum replicas" name="maxReplicas" type="number" min={1} defaultValue={c.maxReplicas} inputMode="numeric" error={fields['configuration.maxReplicas'] ?? fields.maxReplicas} />
        <Field label="Notes" name="notes" maxLength={2000} hint="What this version changes." error={fields.notes} />
        <div className="row">
          <SubmitButton busy={busy} busyLabel="Saving…">Save version</SubmitButton>
          <button type="button" className="button button-quiet" onClick={onClose}>Cancel</button>
        </div>
      </form>
    </section>
  );
}
