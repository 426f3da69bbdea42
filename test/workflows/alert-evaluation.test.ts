// Alert evaluation passes (workflows/alerts/activities.ts) on a real database, with Prometheus's answers
// chosen by the test: a rule goes ok -> pending -> firing -> ok, its firing and resolution are recorded once
// and delivered, signed, to the organization's alert channel; a silenced rule's events are not delivered; a
// budget with action stop stops the organization's deployments (audited) and the API refuses new ones with 402.
// Then the evaluation workflow itself runs its passes on a worker.
import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { Webhook } from 'standardwebhooks';
import type { PrometheusClient } from '../../lib/prometheus/client.ts';
import { createAlertActivities } from '../../workflows/alerts/activities.ts';
import { alertsQueue } from '../../workflows/alerts/queue.ts';
import { alertStore } from '../../workflows/alerts/store.ts';
import { ALERT_EVALUATION_WORKFLOW } from '../../workflows/contract/alerts.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { createQueueWorker } from '../../workflows/queue.ts';
import { webhooksQueue } from '../../workflows/webhooks/queue.ts';
import { webhookDeliveries } from '../../workflows/webhooks/store.ts';
import { signupWithDeployment, startTestApi, validDeployment, type TestApi } from '../support/control-plane.ts';
import { testBundleDir, testTemporalAddress } from '../support/temporal.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';

installTestRuntime();

let api: TestApi;
let client: Client;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
  client = new Client({ connection: await Connection.connect({ address: testTemporalAddress() }) });
});
test.after.always(async () => { await client?.connection.close(); await api?.close(); });

/** A Prometheus answering each query by what it asks for: latency and replica-hours as the test sets them. */
function fakePrometheus(figures: { latency?: number; replicaHours?: number }): PrometheusClient & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    queryRange: async () => [],
    async query(promql) {
      asked.push(promql);
      if (promql.includes('e2e_request_latency') && figures.latency !== undefined) return [{ labels: { deployment: 'llama-chat' }, value: figures.latency }];
      // Replica-hours as the samples of one ready replica at the query's own resolution ([period:step]).
      const step = /:(\d+)s\]\)$/.exec(promql)?.[1];
      if (promql.startsWith('sum_over_time') && step && figures.replicaHours !== undefined) {
        return [{ labels: { deployment: 'llama-chat' }, value: (figures.replicaHours * 3600) / Number(step) }];
      }
      return [];
    },
  };
}

test.serial('a latency rule: pending, firing after its for duration, resolved; each edge recorded once and delivered signed to the alert channel; silenced, nothing is delivered', async (t) => {
  const received: { headers: Record<string, string>; body: string }[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => { received.push({ headers: req.headers as Record<string, string>, body }); res.end(); });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => receiver.close());
  const owner = await signupWithDeployment(api);
  const channel = await api.request('POST', '/v1/monitoring/webhooks', { token: owner.token, body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts` } });
  const rule = await api.request('POST', '/v1/alerts', { token: owner.token, body: { name: 'slow chat', metric: 'latency', threshold: 1, forSeconds: 30, deploymentId: owner.id } });

  const figures = { latency: 2.5 };
  let now = new Date('2026-11-24T10:00:00Z');
  const activities = createAlertActivities({
    store: alertStore(api.orm), prometheus: fakePrometheus(figures), deliveries: webhookDeliveries(api.orm, client), namespaceOf, windowSeconds: 20, now: () => now,
  });
  const ruleState = async () => (await api.request('GET', `/v1/alerts/?orgId=${owner.organizationId}`, { token: owner.token })).body.find((r: { id: string }) => r.id === rule.body.id);
  const worker = await createQueueWorker(webhooksQueue, {
    connection: await NativeConnection.connect({ address: testTemporalAddress() }), bundleDir: testBundleDir(),
    activities: webhooksQueue.activities({ orm: api.orm, signingKey: 'test-signing-key-0123456789abcdefghijklmnop', allowPrivateWebhookUrls: true }),
  });
  await worker.runUntil(async () => {
    await activities.evaluateAlertRules();
    t.like(await ruleState(), { state: 'pending', lastValue: 2.5, since: now.toISOString() });
    now = new Date(now.getTime() + 15_000);
    await activities.evaluateAlertRules();
    t.is((await ruleState()).state, 'pending', 'not yet for 30 s');
    now = new Date(now.getTime() + 15_000);
    const firing = await activities.evaluateAlertRules();
    t.like(firing, { fired: 1, resolved: 0, dispatched: 1 });
    t.is((await ruleState()).state, 'firing');
    now = new Date(now.getTime() + 15_000);
    t.like(await activities.evaluateAlertRules(), { fired: 0, dispatched: 0 }, 'still firing: recorded once');

    figures.latency = 0.4;
    now = new Date(now.getTime() + 15_000);
    t.like(await activities.evaluateAlertRules(), { fired: 0, resolved: 1, dispatched: 1 });
    t.is((await ruleState()).state, 'ok');
    for (let i = 0; i < 100 && received.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
  });

  const alerts = await api.request('GET', `/v1/monitoring/alerts?orgId=${owner.organizationId}`, { token: owner.token });
  t.is(alerts.body.length, 1);
  t.like(alerts.body[0], { ruleId: rule.body.id, state: 'resolved', value: 2.5, threshold: 1, startedAt: '2026-11-24T10:00:00.000Z', firedAt: '2026-11-24T10:00:30.000Z', resolvedAt: '2026-11-24T10:01:00.000Z' });
  t.regex(alerts.body[0].message, /slow chat: latency 2\.5 above 1 for 30 s/);
  t.is(received.length, 2);
  const payloads = received.map((r) => new Webhook(channel.body.secret).verify(r.body, r.headers) as { event: string; data: { id: string } });
  t.deepEqual(payloads.map((p) => p.event).sort(), ['alert.firing', 'alert.resolved']);
  t.true(payloads.every((p) => p.data.id === alerts.body[0].id));

  // Each edge is an in-app notification to the owner too, once.
  const told = (await api.request('GET', `/v1/notifications?orgId=${owner.organizationId}&limit=100`, { token: owner.token })).body.data.filter((n: { kind: string }) => n.kind.startsWith('alert.'));
  t.deepEqual(told.map((n: { kind: string }) => n.kind).sort(), ['alert.fired', 'alert.resolved']);
  t.true(told.every((n: { data: { alertId: string; name: string } }) => n.data.alertId === alerts.body[0].id && n.data.name === 'slow chat'));
  t.like(told.find((n: { kind: string }) => n.kind === 'alert.fired'), { title: 'Alert fired: slow chat', severity: 'warning', message: alerts.body[0].message });

  // Silenced until tomorrow: the next firing is recorded, not delivered.
  await api.request('PUT', '/v1/monitoring/alerts', { token: owner.token, body: { id: alerts.body[0].id, action: 'silence', until: new Date(Date.now() + 86_400_000).toISOString() } });
  figures.latency = 3;
  await api.request('PUT', `/v1/alerts/${rule.body.id}`, { token: owner.token, body: { forSeconds: 0 } });
  now = new Date(now.getTime() + 15_000);
  t.like(await activities.evaluateAlertRules(), { fired: 1, dispatched: 1 });
  await new Promise((r) => setTimeout(r, 500));
  t.is(received.length, 2, 'silenced');
  const { rows } = await api.pool.query(`select count(*)::int as n from alert_event e join alert a on a.id = e.alert_id where a.rule_id = $1 and e.dispatched_at is not null`, [rule.body.id]);
  t.is(rows[0].n, 3);
});

test.serial('a budget with action stop: reached, it stops the organization\'s deployments (audited), and new deployments are 402 naming it', async (t) => {
  const owner = await signupWithDeployment(api);
  const other = await signupWithDeployment(api);
  const budget = await api.request('POST', '/v1/cost-controls/alerts', { token: owner.token, body: { name: 'daily cap', limitCents: 500, period: 'day', action: 'stop' } });
  // 10 replica-hours of an L4: 800 cents.
  const activities = createAlertActivities({
    store: alertStore(api.orm), prometheus: fakePrometheus({ replicaHours: 10 }), deliveries: { startFor: async () => {} }, namespaceOf, windowSeconds: 20,
  });
  const result = await activities.evaluateAlertRules();
  t.true(result.stopped >= 1);
  const budgets = await api.request('GET', `/v1/cost-controls/alerts?orgId=${owner.organizationId}`, { token: owner.token });
  t.like(budgets.body[0], { id: budget.body.id, state: 'firing', spentCents: 800 });
  const { rows: [stopped] } = await api.pool.query('select running, generation, sent_generation from deployment where id = $1', [owner.id]);
  t.false(stopped.running);
  t.true(stopped.generation > stopped.sent_generation, 'a new desired state waits for delivery');
  const { rows: audit } = await api.pool.query(`select user_id, details from audit_log where resource_id = $1 and action = 'deployment.stop'`, [owner.id]);
  t.is(audit.length, 1);
  t.is(audit[0].user_id, 'system:alerts');
  t.like(audit[0].details.budget, { id: budget.body.id, name: 'daily cap' });
  // Another organization's deployment runs on.
  t.true((await api.pool.query('select running from deployment where id = $1', [other.id])).rows[0].running);

  const refused = await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('another') });
  t.is(refused.status, 402);
  t.is(refused.body.code, 'BUDGET_EXCEEDED');
  t.regex(refused.body.message, /daily cap/);
  t.like((await activities.evaluateAlertRules()), { fired: 0 }, 'a reached budget fires once');
});

test.serial('a run of the evaluation workflow makes one pass on its queue and answers what it did', async (t) => {
  const owner = await signupWithDeployment(api);
  const rule = await api.request('POST', '/v1/alerts', { token: owner.token, body: { name: 'failed', metric: 'deployment_failed' } });
  await api.pool.query(`update deployment set status = 'failed' where id = $1`, [owner.id]);
  const taskQueue = `alerts-${Date.now()}`;
  const worker = await createQueueWorker(alertsQueue, {
    connection: await NativeConnection.connect({ address: testTemporalAddress() }), bundleDir: testBundleDir(), taskQueue,
    activities: createAlertActivities({ store: alertStore(api.orm), prometheus: fakePrometheus({}), deliveries: { startFor: async () => {} }, namespaceOf, windowSeconds: 20 }),
  });
  await worker.runUntil(async () => {
    const pass = await client.workflow.execute(ALERT_EVALUATION_WORKFLOW, { workflowId: `alert-evaluation-${Date.now()}`, taskQueue, args: [] });
    t.like(pass, { fired: 1 });
    t.is((await api.pool.query('select state from alert_rule where id = $1', [rule.body.id])).rows[0].state, 'firing');
  });
});
