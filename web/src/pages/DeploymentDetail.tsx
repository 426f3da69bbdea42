// One deployment: its status (live), the timeline of its events (deploymentTimeline.tsx), what it costs, its
// metrics (uPlot, loaded with the charts), its logs as they are written, a playground that streams the model's
// answer, the lifecycle actions (stop and restart after confirming; a requested action shows until the status
// settles), and when it failed, why and what recovery can do. Viewers see no control they cannot use.
import { lazy, Suspense, useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { serverSentEvents } from '../../../client/sdk/client.ts';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import { useLiveEvents, type LiveEvent } from '../live.ts';
import { useMyRole } from '../permissions.ts';
import {
  ConfirmDialog, ErrorBanner, Field, LoadingBlock, money, PageHeader, StatusBadge, useApi, useSubmit, useToast,
} from '../ui/index.ts';
import type { ChartSeries } from '../ui/MetricChart.tsx';
import { DeploymentTimeline } from './deploymentTimeline.tsx';

const MetricChart = lazy(() => import('../ui/MetricChart.tsx'));

type Deployment = Schemas['Deployment'];
type RecoveryAction = Schemas['RecoveryActionRequest']['action'];

const ACTIVE = new Set(['pending', 'deploying', 'running', 'scaling', 'scaled_to_zero', 'updating']);
/** Where a stop, start or restart ends: the request shows until the status moves and reaches one of these. */
const SETTLED = new Set(['running', 'scaled_to_zero', 'stopped', 'failed', 'deleted']);
/** The live status changes the timeline keeps while the page is open. */
const MAX_LIVE = 50;

type Lifecycle = 'stop' | 'start' | 'restart';
/** A lifecycle action the API accepted, from the status it was asked in; `moved`: the status has changed since. */
interface Requested {
  action: Lifecycle;
  from: string;
  moved: boolean;
}
const REQUESTED: Readonly<Record<Lifecycle, string>> = {
  stop: 'Stop requested: Kiln is taking its replicas down. The status follows here.',
  start: 'Start requested: Kiln is rolling it out again. The status follows here.',
  restart: 'Restart requested: Kiln is replacing its replicas one at a time. The status follows here.',
};
const BUSY_LABEL: Readonly<Record<Lifecycle, string>> = { stop: 'Stopping…', start: 'Starting…', restart: 'Restarting…' };

/** The request after the status became `status`; undefined once it settled. */
function advance(requested: Requested | undefined, status: string): Requested | undefined {
  if (!requested) return requested;
  const moved = requested.moved || status !== requested.from;
  if (moved && SETTLED.has(status)) return undefined;
  return moved === requested.moved ? requested : { ...requested, moved };
}

export default function DeploymentDetail() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const toast = useToast();
  const orgId = currentOrgId();
  const me = useMyRole();
  const canChange = me.can('deployments:write');
  // The platform surface answers { success, data }.
  const deployment = useApi(() => ok(api.GET('/api/deployments/{id}', { params: { path: { id } } })).then((r) => r.data), [id]);
  const recovery = useApi(() => ok(api.GET('/v1/recovery/deployments/{id}', { params: { path: { id } } })), [id]);
  const pricing = useApi(() => ok(api.GET('/v1/deployments/{id}/pricing', { params: { path: { id }, query: { orgId } } })), [id, orgId]);
  // One action at a time; pending names it (the scale form shows its own as busy).
  const { pending: busy, error: actionError, run } = useSubmit();
  const [deleting, setDeleting] = useState(false);
  const [forceDeleting, setForceDeleting] = useState(false);
  const [confirming, setConfirming] = useState<'stop' | 'restart'>();
  const [requested, setRequested] = useState<Requested>();
  // The timeline: how many recorded events the socket brought or actions this page had accepted (each reads the
  // feed again: an action's audit record brings no live event), and status changes seen.
  const [recorded, setRecorded] = useState(0);
  const [live, setLive] = useState<LiveEvent[]>([]);

  const refresh = useCallback(() => {
    deployment.reload();
    recovery.reload();
    pricing.reload();
  }, [deployment.reload, recovery.reload, pricing.reload]);
  // Each change of this deployment (status, replicas, events) reads it again, and goes to the timeline.
  const onEvent = (event: LiveEvent) => {
    refresh();
    if (event.type === 'deployment.status') {
      setLive((seen) => [event, ...seen].slice(0, MAX_LIVE));
      setRequested((r) => advance(r, String(event.data?.status ?? '')));
    } else setRecorded((n) => n + 1);
  };
  const onResync = () => {
    refresh();
    setRecorded((n) => n + 1);
  };
  useLiveEvents({ types: ['deployment'], deploymentIds: [id], onEvent, onResync, enabled: !!id });
  // A read of the deployment can show a settled status whose live change was missed.
  const status = deployment.data?.status;
  useEffect(() => {
    if (status) setRequested((r) => advance(r, status));
  }, [status]);

  /**
   * Stop, start or restart: shown as requested before the answer, since the workflow may move the status
   * before the answer arrives; taken back if the API refuses.
   */
  const request = async (action: Lifecycle) => {
    setRequested({ action, from: deployment.data?.status ?? '', moved: false });
    try {
      deployment.setData(await ok(api.POST('/v1/deployments/{id}/actions', { params: { path: { id } }, body: { action } })));
      setRecorded((n) => n + 1);
    } catch (error) {
      setRequested(undefined);
      throw error;
    }
    toast(`${capital(action)} requested`);
  };

  const scale = (replicas: number) => run(async () => {
    deployment.setData(await ok(api.POST('/v1/deployments/{id}/actions', { params: { path: { id } }, body: { action: 'scale', replicas } })));
    setRecorded((n) => n + 1);
    toast(`Scaling to ${replicas}`);
  }, 'scale');
  const patch = (scaling: { replicas: number; minReplicas: number; maxReplicas: number }) => run(async () => {
    const { data } = await ok(api.PATCH('/api/deployments/{id}', { params: { path: { id } }, body: scaling }));
    deployment.setData(data);
    setRecorded((n) => n + 1);
    toast(`Scaling to ${scaling.replicas} (between ${scaling.minReplicas} and ${scaling.maxReplicas})`);
  }, 'scale');
  const recover = (action: RecoveryAction) => run(async () => {
    await ok(api.POST('/v1/recovery/deployments/{id}', { params: { path: { id } }, body: { action } }));
    toast(action === 'force_delete' ? 'Deleting' : 'Retrying the rollout');
    refresh();
  }, action);

  const d = deployment.data;
  if (deployment.error && !d) {
    return (
      <>
        <PageHeader title="Deployment" />
        <ErrorBanner error={deployment.error} onRetry={deployment.reload} />
        <p><Link to="/deployments">Back to deployments</Link></p>
      </>
    );
  }

  return (
    <>
      <PageHeader
        title={d?.name ?? 'Deployment'}
        description={d ? <>{d.model} on {d.gpusPerReplica} × {d.gpuType} per replica</> : 'Loading…'}
        actions={d && canChange && (
          <>
            {/* Start while stopped (or while a start is under way), Stop otherwise; a requested action says it is working. */}
            {requested?.action === 'start' || (d.status === 'stopped' && requested?.action !== 'stop') ? (
              <button type="button" className="button" disabled={!!busy || !!requested} onClick={() => void run(() => request('start'), 'start')}>
                {busy === 'start' || requested?.action === 'start' ? BUSY_LABEL.start : 'Start'}
              </button>
            ) : (
              <button type="button" className="button" disabled={!!busy || !!requested || !ACTIVE.has(d.status)} onClick={() => setConfirming('stop')}>
                {requested?.action === 'stop' ? BUSY_LABEL.stop : 'Stop'}
              </button>
            )}
            <button type="button" className="button" disabled={!!busy || !!requested || !ACTIVE.has(d.status)} onClick={() => setConfirming('restart')}>
              {requested?.action === 'restart' ? BUSY_LABEL.restart : 'Restart'}
            </button>
            <button type="button" className="button button-danger-quiet" onClick={() => setDeleting(true)}>Delete</button>
          </>
        )}
      />
      <ErrorBanner error={actionError} />

      {d?.status === 'failed' && (
        <section className="banner banner-error" aria-labelledby="failed-title">
          <div className="stack-s grow">
            <h2 id="failed-title">The last rollout failed</h2>
            <p data-testid="failure-reason">{d.failureReason ?? recovery.data?.failureReason ?? 'Kiln recorded no reason.'}</p>
            {recovery.data?.workflow?.pendingActivities.map((a) => (
              <p key={a.activity} className="small">{a.activity}, attempt {a.attempt}{a.lastFailure ? `: ${a.lastFailure}` : ''}</p>
            ))}
            {canChange && (
              <>
                <p className="small">Retry rolls it out again; refresh first re-reads what exists on the cluster (after a change made outside Kiln); force delete ends it even if the teardown fails.</p>
                <div className="page-actions">
                  <button type="button" className="button" disabled={!!busy} onClick={() => void recover('retry')}>Retry</button>
                  <button type="button" className="button" disabled={!!busy} onClick={() => void recover('refresh_and_retry')}>Refresh and retry</button>
                  <button type="button" className="button button-danger-quiet" disabled={!!busy} onClick={() => setForceDeleting(true)}>Force delete</button>
                </div>
              </>
            )}
          </div>
        </section>
      )}

      <section className="card" aria-labelledby="status-title">
        <h2 id="status-title">Status</h2>
        {!d ? <LoadingBlock lines={3} label="Loading the deployment" /> : (
          <dl className="facts">
            <div><dt>Status</dt><dd data-testid="deployment-status"><StatusBadge status={d.status} /></dd></div>
            <div><dt>Replicas</dt><dd data-testid="deployment-replicas">{d.currentReplicas} running of {d.replicas}</dd></div>
            <div><dt>Bounds</dt><dd>{d.minReplicas} to {d.maxReplicas}</dd></div>
            <div><dt>Endpoint</dt><dd><code>{d.endpoint}</code></dd></div>
            <div><dt>Created</dt><dd>{new Date(d.createdAt).toLocaleString()}</dd></div>
          </dl>
        )}
        {/* Present before it has words, so screen readers announce the request when it appears. */}
        <div role="status" aria-live="polite" data-testid="requested">
          {requested && <p className="banner banner-info">{REQUESTED[requested.action]}</p>}
        </div>
        {d && canChange && <ScaleForm key={`${d.replicas}/${d.minReplicas}/${d.maxReplicas}`} deployment={d} busy={busy === 'scale'} onScale={(replicas) => void scale(replicas)} onBounds={(scaling) => void patch(scaling)} />}
      </section>

      <div className="cards">
        <section className="card" aria-labelledby="cost-title">
          <h2 id="cost-title">Cost</h2>
          <ErrorBanner error={pricing.error} onRetry={pricing.reload} />
          {!pricing.data && !pricing.error ? <LoadingBlock lines={3} label="Loading the cost" /> : pricing.data && (
            <dl className="facts">
              <div><dt>Per hour now</dt><dd data-testid="cost-hourly">{money(pricing.data.hourlyCents)}</dd></div>
              <div><dt>This month</dt><dd>{money(pricing.data.month.spentCents)}</dd></div>
              <div><dt>Projected</dt><dd>{money(pricing.data.month.projectedCents)}</dd></div>
              <div><dt>Per million tokens</dt><dd data-testid="cost-per-million" title={pricing.data.throughput.note ?? undefined}>{pricing.data.throughput.costPerMillionTokensCents === null ? 'not enough traffic yet' : money(Math.round(pricing.data.throughput.costPerMillionTokensCents))}</dd></div>
            </dl>
          )}
        </section>
        <DeploymentTimeline key={id} id={id} recorded={recorded} live={live.filter((e) => e.deploymentId === id)} />
      </div>

      {d && <Metrics id={id} orgId={orgId} />}
      {d && me.can('deployments:infer') && <Playground deployment={d} />}
      {d && <Logs id={id} orgId={orgId} running={d.currentReplicas > 0} />}

      <ConfirmDialog
        open={deleting}
        title={`Delete “${d?.name ?? ''}”?`}
        confirmLabel="Delete deployment"
        onClose={() => setDeleting(false)}
        onConfirm={async () => {
          await ok(api.DELETE('/api/deployments/{id}', { params: { path: { id } } }));
          toast(`Deleting ${d?.name ?? 'the deployment'}`);
          void navigate('/deployments');
        }}
      >
        <p>Its replicas stop, its endpoint stops answering and its GPUs are released. This cannot be undone.</p>
      </ConfirmDialog>
      <ConfirmDialog
        open={confirming === 'stop'}
        title={`Stop “${d?.name ?? ''}”?`}
        confirmLabel="Stop deployment"
        onClose={() => setConfirming(undefined)}
        onConfirm={() => request('stop')}
      >
        <p>Its endpoint stops answering and requests in progress are cut off. Its replicas stop and their GPUs are released, so it costs nothing while stopped; Start brings it back as it was.</p>
      </ConfirmDialog>
      <ConfirmDialog
        open={confirming === 'restart'}
        title={`Restart “${d?.name ?? ''}”?`}
        confirmLabel="Restart deployment"
        destructive={false}
        onClose={() => setConfirming(undefined)}
        onConfirm={() => request('restart')}
      >
        <p>Kiln replaces its replicas one at a time with new ones, which load the model again. Requests in progress on a replica being replaced may be cut off.</p>
      </ConfirmDialog>
      <ConfirmDialog
        open={forceDeleting}
        title={`Force delete “${d?.name ?? ''}”?`}
        confirmLabel="Force delete"
        onClose={() => setForceDeleting(false)}
        onConfirm={async () => {
          await recover('force_delete');
          void navigate('/deployments');
        }}
      >
        <p>Kiln deletes it and ends it even if tearing down its cluster objects fails; anything left behind must be removed by hand.</p>
      </ConfirmDialog>
    </>
  );
}

/**
 * Replicas and their bounds. A count inside the bounds is the scale action; new bounds (the autoscaler's
 * range) are a change of configuration, PATCH, which sets the count with them.
 */
function ScaleForm({ deployment, busy, onScale, onBounds }: {
  deployment: Deployment; busy: boolean; onScale(replicas: number): void; onBounds(scaling: { replicas: number; minReplicas: number; maxReplicas: number }): void;
}) {
  const [replicas, setReplicas] = useState(deployment.replicas);
  const [minReplicas, setMinReplicas] = useState(deployment.minReplicas);
  const [maxReplicas, setMaxReplicas] = useState(deployment.maxReplicas);
  const boundsChanged = minReplicas !== deployment.minReplicas || maxReplicas !== deployment.maxReplicas;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (boundsChanged) onBounds({ replicas, minReplicas, maxReplicas });
    else onScale(replicas);
  };
  // Typing a count above the maximum raises the maximum with it, as a person means.
  const setCount = (n: number) => {
    setReplicas(n);
    if (n > maxReplicas) setMaxReplicas(n);
    if (n < minReplicas) setMinReplicas(n);
  };
  return (
    <form className="form-row" onSubmit={submit} aria-label="Scale">
      <Field label="Replicas" type="number" min={0} max={100} value={replicas} onChange={(e) => setCount(Number(e.target.value))} />
      <Field label="Minimum replicas" type="number" min={0} max={100} value={minReplicas} onChange={(e) => setMinReplicas(Number(e.target.value))} />
      <Field label="Maximum replicas" type="number" min={1} max={100} value={maxReplicas} onChange={(e) => setMaxReplicas(Number(e.target.value))} />
      <div>
        <button type="submit" className="button" disabled={busy || (replicas === deployment.replicas && !boundsChanged)}>{busy ? 'Scaling…' : 'Scale'}</button>
      </div>
    </form>
  );
}

const METRICS_REFRESH_MS = 15_000;

function Metrics({ id, orgId }: { id: string; orgId: string }) {
  const metrics = useApi(() => ok(api.GET('/v1/deployments/{id}/metrics', { params: { path: { id }, query: { orgId } } })), [id, orgId]);
  const { reload } = metrics;
  useEffect(() => {
    const timer = setInterval(reload, METRICS_REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);
  const s = metrics.data?.series;
  const charts: { title: string; unit: string; series: ChartSeries[] }[] = s ? [
    { title: 'Requests per second', unit: 'req/s', series: [{ label: 'requests', points: s.requestsPerSecond }, { label: 'errors', points: s.errorsPerSecond }] },
    { title: 'Tokens per second', unit: 'tok/s', series: [{ label: 'generated', points: s.generationTokensPerSecond }, { label: 'prompt', points: s.promptTokensPerSecond }] },
    { title: 'Time to first token', unit: 's', series: [{ label: 'p50', points: s.timeToFirstTokenSeconds.p50 }, { label: 'p95', points: s.timeToFirstTokenSeconds.p95 }] },
    { title: 'Ready replicas', unit: 'replicas', series: [{ label: 'ready', points: s.readyReplicas }] },
  ] : [];
  return (
    <section className="card" aria-labelledby="metrics-title">
      <h2 id="metrics-title">Metrics, last hour</h2>
      <ErrorBanner error={metrics.error} onRetry={reload} />
      {!s && !metrics.error ? <LoadingBlock lines={4} label="Loading metrics" /> : (
        <Suspense fallback={<LoadingBlock lines={4} label="Loading charts" />}>
          <div className="charts" data-testid="charts">
            {charts.map((c) => <MetricChart key={c.title} title={c.title} unit={c.unit} series={c.series} />)}
          </div>
        </Suspense>
      )}
    </section>
  );
}

function Playground({ deployment }: { deployment: Deployment }) {
  const [prompt, setPrompt] = useState('Say hello in five words.');
  const [answer, setAnswer] = useState('');
  const [streaming, setStreaming] = useState(false);
  const [error, setError] = useState<unknown>();
  const stop = useRef<AbortController>(undefined);
  useEffect(() => () => stop.current?.abort(), []);

  const send = async (event: FormEvent) => {
    event.preventDefault();
    stop.current?.abort();
    const controller = new AbortController();
    stop.current = controller;
    setAnswer('');
    setError(undefined);
    setStreaming(true);
    try {
      const { data: stream } = await api.POST('/v1/inference', {
        body: { deployment: deployment.id, messages: [{ role: 'user', content: prompt }], stream: true, max_tokens: 128 },
        parseAs: 'stream', headers: { accept: 'text/event-stream' }, signal: controller.signal,
      });
      if (!stream) return;
      for await (const chunk of serverSentEvents(stream)) {
        if (chunk.data === '[DONE]') break;
        const parsed = JSON.parse(chunk.data) as { choices?: { delta?: { content?: string } }[] };
        const token = parsed.choices?.[0]?.delta?.content ?? '';
        if (token) setAnswer((text) => text + token);
      }
    } catch (e) {
      if (!controller.signal.aborted) setError(e);
    } finally {
      setStreaming(false);
    }
  };

  return (
    <section className="card" aria-labelledby="playground-title">
      <h2 id="playground-title">Playground</h2>
      <form onSubmit={(e) => void send(e)} className="stack-s">
        <div className="field">
          <label htmlFor="playground-prompt">Message</label>
          <textarea id="playground-prompt" rows={3} value={prompt} onChange={(e) => setPrompt(e.target.value)} />
        </div>
        <div className="page-actions">
          <button type="submit" className="button button-primary" disabled={streaming || !prompt.trim()}>{streaming ? 'Answering…' : 'Send'}</button>
          {streaming && <button type="button" className="button" onClick={() => stop.current?.abort()}>Stop</button>}
        </div>
      </form>
      <ErrorBanner error={error} />
      <div className="playground-answer" aria-live="polite" aria-label="The model's answer" data-testid="playground-answer">
        {answer || <span className="muted">{deployment.status === 'running' ? 'The answer streams here.' : 'The deployment answers once it is running.'}</span>}
      </div>
    </section>
  );
}

const MAX_LOG_LINES = 500;

function Logs({ id, orgId, running }: { id: string; orgId: string; running: boolean }) {
  const [lines, setLines] = useState<Schemas['DeploymentLogLine'][]>([]);
  const [error, setError] = useState<unknown>();
  const [state, setState] = useState<'following' | 'ended' | 'idle'>('idle');
  const box = useRef<HTMLPreElement>(null);

  useEffect(() => {
    if (!running) return undefined;
    const controller = new AbortController();
    (async () => {
      setState('following');
      setError(undefined);
      try {
        const { data: stream } = await api.GET('/v1/deployments/{id}/logs', {
          params: { path: { id }, query: { orgId, follow: 'true', tail: 100 } }, parseAs: 'stream', headers: { accept: 'text/event-stream' }, signal: controller.signal,
        });
        if (!stream) return;
        for await (const event of serverSentEvents(stream)) {
          if (event.event === 'end') break;
          const line = JSON.parse(event.data) as Schemas['DeploymentLogLine'];
          setLines((all) => [...all.slice(-(MAX_LOG_LINES - 1)), line]);
        }
        setState('ended');
      } catch (e) {
        if (!controller.signal.aborted) {
          setError(e);
          setState('ended');
        }
      }
    })();
    return () => controller.abort();
  }, [id, orgId, running]);

  // Keeps the newest line in view, unless the reader scrolled up.
  useEffect(() => {
    const element = box.current;
    if (element && element.scrollHeight - element.scrollTop - element.clientHeight < 80) element.scrollTop = element.scrollHeight;
  }, [lines]);

  return (
    <section className="card" aria-labelledby="logs-title">
      <h2 id="logs-title">Logs</h2>
      <p className="muted small">{running ? (state === 'following' ? 'Following: new lines appear as the model server writes them.' : 'The stream ended.') : 'No replica is running: no logs to follow.'}</p>
      <ErrorBanner error={error} />
      {/* A scrolling region a keyboard can reach. */}
      <pre className="logs" ref={box} tabIndex={0} role="log" aria-label="Log lines" data-testid="logs">
        {lines.length ? lines.map((l) => `${l.pod.slice(-5)} ${l.line}`).join('\n') : 'No lines yet.'}
      </pre>
    </section>
  );
}

const capital = (s: string) => s[0]!.toUpperCase() + s.slice(1);
