// New deployment: start from a template or a model found in the catalog (with what each GPU type needs for
// it), choose the GPU and the replicas, see the dry run (POST /v1/deployments/validate: every check, the
// objects `pulumi preview` plans, the cost, whether the replicas fit now or once a node pool grows), then create
// and go to the deployment's page.
import { useEffect, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import { ErrorBanner, Field, LoadingBlock, LoadingRows, money, PageHeader, SelectField, useApi, useSubmit } from '../ui/index.ts';

type Template = Schemas['Template'];
type Model = Schemas['Model'];
type Request = Schemas['CreateDeploymentRequest'];
type DryRun = Schemas['DeploymentDryRun'];

type Start = { kind: 'template'; template: Template } | { kind: 'model'; model: Model };

export default function DeploymentNew() {
  const navigate = useNavigate();
  const orgId = currentOrgId();
  const [tab, setTab] = useState<'template' | 'model'>('template');
  const [start, setStart] = useState<Start>();
  const [query, setQuery] = useState('');
  const [name, setName] = useState('');
  // A name the user typed stays; until then it follows the template or model chosen.
  const [nameTyped, setNameTyped] = useState(false);
  const [gpu, setGpu] = useState('nvidia-l4');
  const [replicas, setReplicas] = useState(1);
  const [minReplicas, setMinReplicas] = useState(1);
  const [maxReplicas, setMaxReplicas] = useState(1);
  const [dryRun, setDryRun] = useState<DryRun>();
  // Checking and deploying share one error banner; the pending one says which button is busy.
  const { pending, error, fields, setError, run } = useSubmit();
  const checking = pending === 'check';
  const creating = pending === 'create';

  const templates = useApi(() => ok(api.GET('/v1/templates/deploy', { params: { query: { orgId, limit: 12 } } })), [orgId]);
  const gpuTypes = useApi(() => ok(api.GET('/v1/gpu-types', { params: { query: { orgId } } })), [orgId]);
  // Searched as the user types, a little after the last key.
  const [searched, setSearched] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setSearched(query.trim()), 250);
    return () => clearTimeout(timer);
  }, [query]);
  const models = useApi(() => ok(api.GET('/v1/models/search', { params: { query: { orgId, limit: 12, q: searched || undefined } } })), [orgId, searched]);
  const modelId = start?.kind === 'model' ? start.model.id : undefined;
  const details = useApi(
    () => (modelId ? ok(api.GET('/v1/models/{id}', { params: { path: { id: modelId }, query: { orgId } } })) : Promise.resolve(undefined)),
    [modelId, orgId],
  );

  const choose = (next: Start) => {
    setStart(next);
    setDryRun(undefined);
    setError(undefined);
    if (next.kind === 'template') {
      const c = next.template.configuration;
      setGpu(c.gpu);
      setReplicas(c.replicas);
      setMinReplicas(c.minReplicas);
      setMaxReplicas(c.maxReplicas);
    }
    if (!nameTyped) setName(suggestName(next.kind === 'template' ? next.template.configuration.model : next.model.id));
  };

  const request = (): Request | undefined => {
    if (!start) return undefined;
    const model = start.kind === 'template' ? start.template.configuration.model : start.model.id;
    const base: Request = { name, model, runtime: 'vllm', gpu: gpu as Request['gpu'], replicas, minReplicas, maxReplicas };
    if (start.kind === 'template') {
      const c = start.template.configuration;
      const sameGpu = c.gpu === gpu;
      return {
        ...base, dtype: c.dtype, vllmArgs: c.vllmArgs,
        ...(sameGpu ? { gpusPerReplica: c.gpusPerReplica as Request['gpusPerReplica'] } : {}),
        ...(sameGpu && c.contextLength !== null ? { contextLength: c.contextLength } : {}),
      };
    }
    return base;
  };

  // Anything changed after a dry run asks for a new one before creating.
  useEffect(() => setDryRun(undefined), [name, gpu, replicas, minReplicas, maxReplicas]);

  const check = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const body = request();
    if (!body) return;
    await run(async () => {
      setDryRun(await ok(api.POST('/v1/deployments/validate', { params: { query: { preview: 'true' } }, body })));
    }, 'check');
  };

  const create = async () => {
    const body = request();
    if (!body || !start) return;
    await run(async () => {
      const c = start.kind === 'template' ? start.template.configuration : undefined;
      // The template's own configuration deploys through the template, so the deployment remembers it.
      const asTemplate = start.kind === 'template' && c && c.gpu === gpu && c.replicas === replicas && c.minReplicas === minReplicas && c.maxReplicas === maxReplicas;
      const created = asTemplate
        ? await ok(api.POST('/v1/templates/{id}/deploy', { params: { path: { id: start.template.id } }, body: { name } }))
        : await ok(api.POST('/v1/deployments', { body }));
      void navigate(`/deployments/${created.id}`);
      return 'leaving';
    }, 'create');
  };

  const ready = !!start && !!name;

  return (
    <>
      <PageHeader title="New deployment" description="Pick a model or a template, choose its GPU and replicas, check what Kiln will do and what it costs, then deploy." />

      <section className="card" aria-labelledby="start-title">
        <h2 id="start-title">1. What to deploy</h2>
        <div className="page-actions" role="group" aria-label="Start from">
          <button type="button" className="button toggle" aria-pressed={tab === 'template'} onClick={() => setTab('template')}>From a template</button>
          <button type="button" className="button toggle" aria-pressed={tab === 'model'} onClick={() => setTab('model')}>Search models</button>
        </div>
        {tab === 'template' ? (
          <>
            <ErrorBanner error={templates.error} onRetry={templates.reload} />
            {templates.data === undefined && !templates.error ? <LoadingRows rows={2} columns={3} label="Loading templates" /> : (
              <ul className="choice-list" aria-label="Templates">
                {templates.data?.data.map((t) => {
                  // A template on a GPU type no cluster offers now cannot run: shown, but not offered.
                  const offered = gpuTypes.data?.find((g) => g.id === t.configuration.gpu)?.available ?? true;
                  return (
                    <li key={t.id}>
                      <button type="button" className="button" disabled={!offered} aria-pressed={start?.kind === 'template' && start.template.id === t.id} onClick={() => choose({ kind: 'template', template: t })}>
                        <strong>{t.name}</strong>
                        <span className="muted small">{t.configuration.model} · {t.configuration.gpusPerReplica} × {t.configuration.gpu}{offered ? '' : ' · no GPU cluster offers it now'}</span>
                      </button>
                    </li>
                  );
                })}
              </ul>
            )}
          </>
        ) : (
          <>
            <Field label="Search the model catalog" type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="llama, qwen, mistral…" autoComplete="off" />
            <ErrorBanner error={models.error} onRetry={models.reload} />
            {models.data === undefined && !models.error ? <LoadingRows rows={2} columns={3} label="Loading models" /> : (
              <ul className="choice-list" aria-label="Models">
                {models.data?.data.map((m) => (
                  <li key={m.id}>
                    <button type="button" className="button" aria-pressed={start?.kind === 'model' && start.model.id === m.id} onClick={() => choose({ kind: 'model', model: m })}>
                      <strong>{m.displayName}</strong>
                      <span className="muted small">
                        {m.id}{m.parametersBillion ? ` · ${m.parametersBillion}B` : ''}{m.gated ? ' · gated' : ''}
                      </span>
                    </button>
                  </li>
                ))}
                {models.data?.data.length === 0 && <li className="muted">No model matches “{searched}”.</li>}
              </ul>
            )}
            {modelId && (
              <div className="stack-s">
                <h3>What {modelId} needs on each GPU</h3>
                <ErrorBanner error={details.error} onRetry={details.reload} />
                {details.loading && !details.data ? <LoadingBlock lines={3} label="Loading the model's GPU needs" /> : details.data && (
                  <div className="table-wrap">
                    <table className="table">
                      <caption className="visually-hidden">GPUs per replica and price by GPU type</caption>
                      <thead><tr><th scope="col">GPU</th><th scope="col" className="numeric">GPUs per replica</th><th scope="col" className="numeric">Per replica-hour</th><th scope="col" className="numeric">Tokens/s (one sequence)</th></tr></thead>
                      <tbody>
                        {details.data.hardware.map((h) => (
                          <tr key={h.gpu}>
                            <td data-label="GPU">{h.gpu}</td>
                            <td data-label="GPUs per replica" className="numeric">{h.gpusPerReplica ?? 'does not fit'}</td>
                            <td data-label="Per replica-hour" className="numeric">{h.hourlyPriceUsd === null ? '—' : money(Math.round(h.hourlyPriceUsd * 100))}</td>
                            <td data-label="Tokens/s (one sequence)" className="numeric">{h.tokensPerSecond ? `${Math.round(h.tokensPerSecond.low)}–${Math.round(h.tokensPerSecond.high)}` : '—'}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                )}
              </div>
            )}
          </>
        )}
      </section>

      <section className="card" aria-labelledby="configure-title">
        <h2 id="configure-title">2. Where and how many</h2>
        <form id="deployment-form" onSubmit={(e) => void check(e)} noValidate className="stack">
          <Field label="Name" name="name" value={name} onChange={(e) => { setName(e.target.value); setNameTyped(e.target.value !== ''); }} required maxLength={63}
            hint="Lower-case letters, digits and hyphens; it becomes part of the endpoint." error={fields.name} />
          <ErrorBanner error={gpuTypes.error} onRetry={gpuTypes.reload} />
          <div className="form-row">
            {/* Until the GPU types answer, the choice is shown without a price rather than a made-up one. */}
            <SelectField label="GPU type" value={gpu} onChange={(e) => setGpu(e.target.value)}
              options={gpuTypes.data
                ? gpuTypes.data.map((g) => ({ value: g.id, label: `${g.name} · ${money(Math.round(g.hourlyPriceUsd * 100))}/h${g.available ? '' : ' · none free now'}` }))
                : [{ value: gpu, label: `${gpu} · ${gpuTypes.error ? 'price unavailable' : 'price loading…'}` }]} />
            <Field label="Replicas" type="number" min={0} max={100} value={replicas} onChange={(e) => setReplicas(Number(e.target.value))} error={fields.replicas} />
            <Field label="Minimum" type="number" min={0} max={100} value={minReplicas} onChange={(e) => setMinReplicas(Number(e.target.value))} hint="0 lets it sleep when idle." error={fields.minReplicas} />
            <Field label="Maximum" type="number" min={1} max={100} value={maxReplicas} onChange={(e) => setMaxReplicas(Number(e.target.value))} error={fields.maxReplicas} />
          </div>
          <div>
            <button type="submit" className="button" disabled={!ready || checking}>
              {checking ? 'Checking… (a preview takes a few seconds)' : 'Check and price it'}
            </button>
            {!start && <p className="muted small">Choose a template or a model first.</p>}
          </div>
        </form>
      </section>

      <ErrorBanner error={error} />

      {dryRun && (
        <section className="card" aria-labelledby="review-title">
          <h2 id="review-title">3. Review</h2>
          <ul className="checks" aria-label="Checks">
            {dryRun.checks.map((c) => (
              <li key={c.check} className={`check-${c.status}`}>
                <strong>{{ passed: '✓', failed: '✗', unverified: '?' }[c.status]} {c.check.replaceAll('_', ' ')}</strong>: <span>{c.reason}</span>
              </li>
            ))}
          </ul>
          <dl className="facts">
            <div><dt>Cost per hour</dt><dd data-testid="dry-run-hourly">{money(dryRun.cost.hourlyCents)}</dd></div>
            <div><dt>Per day</dt><dd>{money(dryRun.cost.dailyCents)}</dd></div>
            <div><dt>Per month (30 days)</dt><dd>{money(dryRun.cost.monthlyCents)}</dd></div>
            <div><dt>Your credits cover</dt><dd>{dryRun.cost.hoursCovered === null ? '—' : `${Math.floor(dryRun.cost.hoursCovered)} hours`}</dd></div>
            <div><dt>Cluster</dt><dd>{dryRun.deployment.cluster?.name ?? '—'}</dd></div>
            <div><dt>Fits</dt><dd data-testid="dry-run-fit">{fitText(dryRun.fit)}</dd></div>
          </dl>
          {dryRun.plan && (
            <div className="stack-s">
              <h3>What Kiln will create</h3>
              {dryRun.plan.failure ? <p className="check-failed">{dryRun.plan.failure}</p> : (
                <ul className="checks" aria-label="Planned resources">
                  {dryRun.plan.resources.map((r) => <li key={`${r.type}/${r.name}`}><code>{r.operation}</code> {r.type} <span className="muted">{r.name}</span></li>)}
                </ul>
              )}
            </div>
          )}
          <div>
            <button type="button" className="button button-primary" onClick={() => void create()} disabled={!dryRun.valid || creating}>
              {creating ? 'Deploying…' : 'Deploy'}
            </button>
            {!dryRun.valid && <p className="muted small">Fix what failed above, then check again.</p>}
          </div>
        </section>
      )}
    </>
  );
}

/** "meta-llama/Llama-3.1-8B-Instruct" -> "llama-3-1-8b-instruct": a DNS label the name rule accepts. */
function suggestName(model: string): string {
  const base = (model.split('/').pop() ?? model).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  const named = /^[a-z]/.test(base) ? base : `m-${base}`;
  return named.slice(0, 50).replace(/-+$/, '') || 'my-model';
}

/** The dry run's fit in a few words: now, after which pools grow (and what the nodes add per hour), or not. */
function fitText(fit: DryRun['fit']): string {
  if (fit.verdict === 'fits_now') return `now (${fit.replicas} of ${fit.replicas} replicas)`;
  const grown = fit.growth?.pools.map((p) => `pool ${p.pool} grows by ${p.nodes} node${p.nodes === 1 ? '' : 's'}`).join(', then ');
  if (fit.verdict === 'fits_after_growth') return `${fit.replicasFit} of ${fit.replicas} replicas now, all once ${grown} (${money(fit.growth!.hourlyCents)} more per hour)`;
  return `no: ${fit.replicasFit} of ${fit.replicas} replicas`;
}
