// Observe, Alerts: the rules (a metric, a threshold, how long it must hold), the alerts they fired
// (acknowledge, silence, resolve) and the webhooks alerts are delivered to. Budgets have their own page.
import { useState } from 'react';
import { Link } from 'react-router';
import { api, currentOrgId, ok, type Schemas } from '../api.ts';
import {
  ConfirmDialog, CopyButton, DataTable, EmptyState, ErrorBanner, Field, PageHeader, SelectField, SubmitButton, useApi, useSubmit, useToast, type Column,
} from '../ui/index.ts';
import { deploymentChoices, when } from './alertsShared.ts';

type Rule = Schemas['AlertRule'];
type Alert = Schemas['Alert'];
type Channel = Schemas['WebhookSubscription'];
type Metric = Exclude<Rule['metric'], 'spend'>;

/** The metrics a rule watches (spend is a budget's), with the threshold's unit. */
const METRICS: readonly { value: Metric; label: string; unit?: string }[] = [
  { value: 'latency', label: 'Latency (end to end)', unit: 'Seconds' },
  { value: 'time_to_first_token', label: 'Time to first token', unit: 'Seconds' },
  { value: 'error_rate', label: 'Error rate', unit: 'A ratio from 0 to 1 (0.05 is 5%)' },
  { value: 'queue', label: 'Requests waiting', unit: 'Requests' },
  { value: 'replicas_at_max', label: 'Replicas at their maximum' },
  { value: 'deployment_failed', label: 'Deployment failed' },
];
const metricLabel = (m: string) => METRICS.find((x) => x.value === m)?.label ?? (m === 'spend' ? 'Spend (budget)' : m);
const hasQuantile = (m: string) => m === 'latency' || m === 'time_to_first_token';

function condition(r: Pick<Rule, 'metric' | 'threshold' | 'comparison' | 'quantile' | 'forSeconds'>): string {
  if (r.threshold === null) return 'When it happens';
  const held = r.forSeconds ? ` for ${r.forSeconds}s` : '';
  return `${r.quantile && hasQuantile(r.metric) ? `${r.quantile} ` : ''}${r.comparison} ${r.threshold}${hasQuantile(r.metric) ? ' s' : ''}${held}`;
}

export default function Alerts() {
  const toast = useToast();
  const orgId = currentOrgId();
  const rules = useApi(async () => (await ok(api.GET('/v1/alerts', { params: { query: { orgId } } }))).filter((r) => r.metric !== 'spend'), []);
  const alerts = useApi(() => ok(api.GET('/v1/monitoring/alerts', { params: { query: { orgId } } })), []);
  const channels = useApi(() => ok(api.GET('/v1/monitoring/webhooks', { params: { query: { orgId } } })), []);
  const [editing, setEditing] = useState<Rule | 'new'>();
  const [deleting, setDeleting] = useState<Rule>();
  const [removingChannel, setRemovingChannel] = useState<Channel>();
  const alertAction = useSubmit();

  const act = (alert: Alert, action: 'acknowledge' | 'silence' | 'unsilence' | 'resolve') => alertAction.run(async () => {
    const until = action === 'silence' ? { until: new Date(Date.now() + 3_600_000).toISOString() } : {};
    await ok(api.PUT('/v1/monitoring/alerts', { body: { id: alert.id, action, ...until } }));
    toast({ acknowledge: 'Alert acknowledged', silence: 'Alert silenced for an hour', unsilence: 'Alert no longer silenced', resolve: 'Alert resolved' }[action]);
    alerts.reload();
  });

  const ruleColumns: Column<Rule>[] = [
    { header: 'Name', cell: (r) => <strong>{r.name}</strong> },
    { header: 'Metric', cell: (r) => metricLabel(r.metric) },
    { header: 'Fires', cell: condition },
    { header: 'Watches', cell: (r) => r.deploymentName ?? 'Any deployment' },
    { header: 'State', cell: (r) => <span className={`badge badge-${r.state}`}>{r.enabled ? r.state : 'disabled'}</span> },
    {
      header: 'Actions',
      cell: (r) => (
        <span className="row">
          <button type="button" className="button button-quiet" aria-label={`Edit ${r.name}`} onClick={() => setEditing(r)}>Edit</button>
          <button type="button" className="button button-danger-quiet" aria-label={`Delete ${r.name}`} onClick={() => setDeleting(r)}>Delete</button>
        </span>
      ),
    },
  ];

  const alertColumns: Column<Alert>[] = [
    { header: 'Alert', cell: (a) => <span className="stack-xs"><strong>{a.name}</strong><span className="muted small">{a.message}</span></span> },
    { header: 'State', cell: (a) => <span className={`badge badge-${a.state}`}>{a.state}{a.acknowledgedAt ? ', acknowledged' : ''}{a.silencedUntil && Date.parse(a.silencedUntil) > Date.now() ? ', silenced' : ''}</span> },
    { header: 'Value', numeric: true, cell: (a) => (a.value === null ? '—' : `${a.value}${a.threshold !== null ? ` (threshold ${a.threshold})` : ''}`) },
    { header: 'Fired', cell: (a) => when(a.firedAt) },
    { header: 'Resolved', cell: (a) => when(a.resolvedAt) },
    {
      header: 'Actions',
      cell: (a) => a.state === 'firing' && (
        <span className="row">
          {!a.acknowledgedAt && <button type="button" className="button button-quiet" aria-label={`Acknowledge ${a.name}`} onClick={() => void act(a, 'acknowledge')}>Acknowledge</button>}
          {a.silencedUntil && Date.parse(a.silencedUntil) > Date.now()
            ? <button type="button" className="button button-quiet" aria-label={`Unsilence ${a.name}`} onClick={() => void act(a, 'unsilence')}>Unsilence</button>
            : <button type="button" className="button button-quiet" aria-label={`Silence ${a.name} for an hour`} onClick={() => void act(a, 'silence')}>Silence 1 h</button>}
          {a.ruleId === null && <button type="button" className="button button-quiet" aria-label={`Resolve ${a.name}`} onClick={() => void act(a, 'resolve')}>Resolve</button>}
        </span>
      ),
    },
  ];

  const channelColumns: Column<Channel>[] = [
    { header: 'URL', cell: (c) => <code className="small">{c.url}</code> },
    { header: 'Events', cell: (c) => c.events.join(', ') },
    { header: 'Actions', cell: (c) => <button type="button" className="button button-danger-quiet" aria-label={`Remove ${c.url}`} onClick={() => setRemovingChannel(c)}>Remove</button> },
  ];

  return (
    <>
      <PageHeader
        title="Alerts"
        description={<>Rules watch your deployments&apos; metrics and fire when a threshold is crossed for long enough. Spend limits are under <Link to="/budgets">Budgets</Link>.</>}
        actions={editing === undefined && <button type="button" className="button button-primary" onClick={() => setEditing('new')}>New alert rule</button>}
      />
      {editing !== undefined && (
        <RuleForm
          key={editing === 'new' ? 'new' : editing.id}
          rule={editing === 'new' ? undefined : editing}
          onClose={() => setEditing(undefined)}
          onSaved={(r) => { toast(`Alert rule “${r.name}” saved`); setEditing(undefined); rules.reload(); }}
        />
      )}

      <section className="stack" aria-labelledby="rules-title">
        <h2 id="rules-title">Rules</h2>
        <ErrorBanner error={rules.error} onRetry={rules.reload} />
        {!rules.error && (
          <DataTable caption="Alert rules" columns={ruleColumns} rows={rules.data} rowKey={(r) => r.id}
            empty={<EmptyState title="No alert rules yet">Add one to hear when latency, errors or the queue grow, or a deployment fails.</EmptyState>} />
        )}
      </section>

      <section className="stack" aria-labelledby="fired-title">
        <h2 id="fired-title">Alerts fired</h2>
        <p className="muted">Firing now, and those resolved in the last week.</p>
        <ErrorBanner error={alerts.error ?? alertAction.error} onRetry={alerts.error ? alerts.reload : undefined} />
        {!alerts.error && (
          <DataTable caption="Alerts fired" columns={alertColumns} rows={alerts.data} rowKey={(a) => a.id}
            empty={<EmptyState title="Nothing has fired">Alerts appear here when a rule fires.</EmptyState>} />
        )}
      </section>

      <Channels channels={channels} columns={channelColumns} />

      <ConfirmDialog
        open={!!deleting}
        title={`Delete the rule “${deleting?.name ?? ''}”?`}
        confirmLabel="Delete rule"
        onClose={() => setDeleting(undefined)}
        onConfirm={async () => {
          if (!deleting) return;
          await ok(api.DELETE('/v1/alerts/{id}', { params: { path: { id: deleting.id } } }));
          toast(`Alert rule “${deleting.name}” deleted`);
          rules.reload();
          alerts.reload();
        }}
      >
        <p>It stops watching at once; an alert it has firing is resolved.</p>
      </ConfirmDialog>
      <ConfirmDialog
        open={!!removingChannel}
        title="Stop delivering alerts there?"
        confirmLabel="Remove channel"
        onClose={() => setRemovingChannel(undefined)}
        onConfirm={async () => {
          if (!removingChannel) return;
          await ok(api.DELETE('/v1/monitoring/webhooks', { params: { query: { id: removingChannel.id } } }));
          toast('Alert channel removed');
          channels.reload();
        }}
      >
        <p><code>{removingChannel?.url}</code> will receive no more alert events.</p>
      </ConfirmDialog>
    </>
  );
}

function RuleForm({ rule, onClose, onSaved }: { rule?: Rule; onClose(): void; onSaved(r: Rule): void }) {
  // Asked when the form opens, not with the page (the rules list carries the names it shows). The rule's own
  // deployment is a choice from the start, so the select keeps it while the list loads or if it was deleted since.
  const choices = useApi(deploymentChoices, []).data ?? [];
  const own = rule?.deploymentId && !choices.some((d) => d.value === rule.deploymentId) ? [{ value: rule.deploymentId, label: rule.deploymentName ?? rule.deploymentId }] : [];
  const deployments = [...choices, ...own];
  const [metric, setMetric] = useState<string>(rule?.metric ?? 'latency');
  const { busy, error, fields, onSubmit } = useSubmit();
  const unit = METRICS.find((m) => m.value === metric)?.unit;
  const save = onSubmit(async (form) => {
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const threshold = text('threshold');
    const body = {
      name: text('name'),
      metric: metric as Metric,
      deploymentId: text('deploymentId') || null,
      ...(unit && threshold !== '' ? { threshold: Number(threshold) } : {}),
      ...(unit ? { comparison: text('comparison') as Rule['comparison'] } : {}),
      ...(hasQuantile(metric) ? { quantile: text('quantile') as NonNullable<Rule['quantile']> } : {}),
      forSeconds: Number(text('forSeconds') || 0),
    };
    onSaved(rule
      ? await ok(api.PUT('/v1/alerts/{id}', { params: { path: { id: rule.id } }, body }))
      : await ok(api.POST('/v1/alerts', { body })));
  });
  return (
    <section className="card" aria-labelledby="rule-title">
      <h2 id="rule-title">{rule ? `Edit “${rule.name}”` : 'New alert rule'}</h2>
      <form className="stack" noValidate onSubmit={save}>
        <ErrorBanner error={error} />
        <Field label="Name" name="name" required maxLength={100} defaultValue={rule?.name} error={fields.name} />
        <SelectField label="Metric" name="metric" value={metric} onChange={(e) => setMetric(e.target.value)} options={METRICS} error={fields.metric} />
        <SelectField label="Deployment" name="deploymentId" defaultValue={rule?.deploymentId ?? ''} options={[{ value: '', label: 'Any deployment (the worst one)' }, ...deployments]} error={fields.deploymentId} />
        {unit && (
          <>
            <SelectField label="Fires when the value is" name="comparison" defaultValue={rule?.comparison ?? 'above'} options={[{ value: 'above', label: 'Above the threshold' }, { value: 'below', label: 'Below the threshold' }]} error={fields.comparison} />
            <Field label="Threshold" name="threshold" type="number" step="any" inputMode="decimal" required defaultValue={rule?.threshold ?? ''} hint={unit} error={fields.threshold} />
          </>
        )}
        {hasQuantile(metric) && (
          <SelectField label="Percentile" name="quantile" defaultValue={rule?.quantile ?? 'p95'} options={[{ value: 'p50', label: 'p50 (median)' }, { value: 'p95', label: 'p95' }, { value: 'p99', label: 'p99' }]} error={fields.quantile} />
        )}
        <Field label="For how long (seconds)" name="forSeconds" type="number" min={0} inputMode="numeric" defaultValue={rule?.forSeconds ?? 300} hint="The condition must hold this long before the rule fires; 0: at once." error={fields.forSeconds} />
        <div className="row">
          <SubmitButton busy={busy} busyLabel="Saving…">{rule ? 'Save rule' : 'Create rule'}</SubmitButton>
          <button type="button" className="button button-quiet" onClick={onClose}>Cancel</button>
        </div>
      </form>
    </section>
  );
}

function Channels({ channels, columns }: { channels: ReturnType<typeof useApi<Channel[]>>; columns: Column<Channel>[] }) {
  const { busy, error, fields, onSubmit } = useSubmit();
  const [secret, setSecret] = useState<string>();
  const create = onSubmit(async (form, formElement) => {
    const created = await ok(api.POST('/v1/monitoring/webhooks', { body: { url: String(form.get('url') ?? '').trim() } }));
    setSecret(created.secret);
    formElement.reset();
    channels.reload();
  });
  return (
    <section className="stack" aria-labelledby="channels-title">
      <h2 id="channels-title">Where alerts go</h2>
      <p className="muted">Each alert that fires or resolves is sent to these URLs, signed with the channel&apos;s secret, and retried until they answer.</p>
      {secret && (
        <div className="banner banner-success">
          <div className="stack-s grow">
            <strong>Channel added. Copy its signing secret now: it will not be shown again.</strong>
            <div className="secret-row"><code className="secret">{secret}</code><CopyButton value={secret} label="Copy secret" /></div>
          </div>
          <button type="button" className="button button-quiet" onClick={() => setSecret(undefined)}>I have copied it</button>
        </div>
      )}
      <ErrorBanner error={channels.error} onRetry={channels.reload} />
      {!channels.error && (
        <DataTable caption="Alert channels" columns={columns} rows={channels.data} rowKey={(c) => c.id}
          empty={<p className="muted">No channels: alerts show here only.</p>} />
      )}
      <form className="row row-end" noValidate onSubmit={create}>
        <Field label="Webhook URL" name="url" type="url" required placeholder="https://example.com/kiln-alerts" error={fields.url} />
        <SubmitButton busy={busy} busyLabel="Adding…" className="button">Add channel</SubmitButton>
      </form>
      <ErrorBanner error={error && !fields.url ? error : undefined} />
    </section>
  );
}
