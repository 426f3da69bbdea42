// Optimization auto-apply (workflows/optimization/activities.ts) on a real database, with Prometheus's answers
// chosen by the test (an HTTP stand-in answering each query by the deployment's namespace and the figure it
// reads): an idle deployment whose policy has autoApply on is scaled to zero, an underused one to fewer
// replicas, each change a new generation (waiting for the desired-state delivery), a user-set replica count and
// an audit record as system:optimization; autoApply off, nothing changes; within the hour of a change, nothing
// more; with p95 time to first token above the target, no capacity is cut. Then the workflow itself runs its
// passes on a worker.
import test from 'ava';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createPrometheusClient } from '../../lib/prometheus/client.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { OPTIMIZATION_WORKFLOW } from '../../workflows/contract/optimization.ts';
import { createOptimizationActivities } from '../../workflows/optimization/activities.ts';
import { optimizationQueue } from '../../workflows/optimization/queue.ts';
import { optimizationStore } from '../../workflows/optimization/store.ts';
import { createQueueWorker } from '../../workflows/queue.ts';
import { signupWithDeployment, startTestApi, type TestApi } from '../support/control-plane.ts';
import { startPrometheusStandIn, type PrometheusStandIn } from '../support/prometheus-standin.ts';
import { testBundleDir, testTemporalAddress } from '../support/temporal.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';

installTestRuntime();

/** What Prometheus measured for one deployment over the hour. */
interface Figures {
  requestsPerSecond: number;
  requestsRunningMax: number;
  requestsWaitingMax: number;
  kvCacheUsageMax: number;
  p95TimeToFirstTokenSeconds?: number;
}
const IDLE: Figures = { requestsPerSecond: 0, requestsRunningMax: 0, requestsWaitingMax: 0, kvCacheUsageMax: 0 };
/** Busy but underused: a fifth of the KV cache at its peak, nobody waiting. */
const UNDERUSED: Figures = { requestsPerSecond: 1.5, requestsRunningMax: 3, requestsWaitingMax: 0, kvCacheUsageMax: 0.2, p95TimeToFirstTokenSeconds: 0.2 };

/** Figures by namespace (one deployment per organization here); a namespace not listed has no series. */
const measured = new Map<string, Figures>();

function answer(query: string): Array<{ deployment: string; value: number }> {
  const namespace = /namespace="([^"]+)"/.exec(query)?.[1] ?? '';
  const deployment = /deployment="([^"]+)"/.exec(query)?.[1] ?? '';
  const f = measured.get(namespace);
  if (!f) return [];
  const value = (() => {
    if (/request_success_total/.test(query)) return f.requestsPerSecond;
    if (/^max_over_time\(\(sum by \(deployment\) \(vllm:num_requests_running/.test(query)) return f.requestsRunningMax;
    if (/^avg_over_time\(\(sum by \(deployment\) \(vllm:num_requests_running/.test(query)) return f.requestsRunningMax / 2;
    if (/vllm:num_requests_waiting/.test(query)) return f.requestsWaitingMax;
    if (/vllm:kv_cache_usage_perc/.test(query)) return f.kvCacheUsageMax;
    if (/time_to_first_token/.test(query)) return f.p95TimeToFirstTokenSeconds;
    if (/up\{/.test(query)) return 1;
    return undefined;
  })();
  return value === undefined ? [] : [{ deployment, value }];
}

let api: TestApi;
let prometheus: PrometheusStandIn;
let client: Client;
test.before(async () => {
  prometheus = await startPrometheusStandIn(answer);
  api = await startTestApi(import.meta.filename, { config: { prometheusUrl: prometheus.url } });
  client = new Client({ connection: await Connection.connect({ address: testTemporalAddress() }) });
});
test.after.always(async () => {
  await client?.connection.close();
  await api?.close();
  await prometheus?.close();
});

/** A deployment its workflow reported running with `replicas` (no deployment worker runs here), its policy set, and its load. */
async function deploymentWith(replicas: number, policy: { autoApply: boolean; targetP95TimeToFirstTokenMs?: number }, figures: Figures) {
  const owner = await signupWithDeployment(api);
  await api.pool.query(`UPDATE deployment SET status = 'running', replicas = $2, min_replicas = 1, max_replicas = $2, current_replicas = $2 WHERE id = $1`, [owner.id, replicas]);
  const put = await api.request('PUT', `/v1/deployments/${owner.id}/optimization`, { token: owner.token, body: { targetP95TimeToFirstTokenMs: 500, ...policy } });
  if (put.status !== 200) throw new Error(`policy: ${put.status} ${JSON.stringify(put.body)}`);
  measured.set(namespaceOf(owner.organizationId), figures);
  return owner;
}

const row = async (id: string) => (await api.pool.query(
  'SELECT replicas, min_replicas, max_replicas, generation, sent_generation, replica_requests FROM deployment WHERE id = $1', [id],
)).rows[0] as { replicas: number; min_replicas: number; max_replicas: number; generation: number; sent_generation: number; replica_requests: number };
const audits = async (id: string) => (await api.pool.query(
  `SELECT user_id, details FROM audit_log WHERE resource_id = $1 AND action = 'deployment.optimize' ORDER BY created_at`, [id],
)).rows as Array<{ user_id: string; details: { recommendation: string; change: Record<string, number> } }>;

const activitiesAt = (clock: { now: Date }) => createOptimizationActivities({
  store: optimizationStore(api.orm), prometheus: createPrometheusClient(prometheus.url), namespaceOf, now: () => clock.now,
});

test.serial('an idle deployment with autoApply on is scaled to zero: a new generation to deliver, a user-set count, audited as system:optimization; with autoApply off nothing changes', async (t) => {
  const on = await deploymentWith(2, { autoApply: true }, IDLE);
  const off = await deploymentWith(2, { autoApply: false }, IDLE);
  const before = { on: await row(on.id), off: await row(off.id) };
  const clock = { now: new Date() };
  const result = await activitiesAt(clock).autoApplyRecommendations();
  t.is(result.applied, 1);

  const after = await row(on.id);
  t.like(after, { replicas: 0, min_replicas: 0, max_replicas: 2, generation: before.on.generation + 1, replica_requests: before.on.replica_requests + 1 });
  t.true(after.generation > after.sent_generation, 'the new desired state waits for the API\'s delivery');
  const [audit, ...more] = await audits(on.id);
  t.is(more.length, 0);
  t.is(audit!.user_id, 'system:optimization');
  t.like(audit!.details, { recommendation: 'scale-to-zero', change: { replicas: 0, minReplicas: 0 } });

  t.deepEqual(await row(off.id), before.off, 'autoApply off: nothing changes');
  t.deepEqual(await audits(off.id), []);
  // GET still recommends it to a person.
  const got = await api.request('GET', `/v1/deployments/${off.id}/optimization?orgId=${off.organizationId}`, { token: off.token });
  t.is(got.status, 200, JSON.stringify(got.body));
  t.is(got.body.recommendations[0]?.id, 'scale-to-zero');
});

test.serial('an underused deployment gets fewer replicas, then nothing more within the hour; after it, the next cut', async (t) => {
  const owner = await deploymentWith(4, { autoApply: true }, UNDERUSED);
  const clock = { now: new Date() };
  const activities = activitiesAt(clock);
  await activities.autoApplyRecommendations();
  // The KV cache peaked at 20% over 4 replicas: 2 hold it under 70%.
  const first = await row(owner.id);
  t.like(first, { replicas: 2, min_replicas: 1, max_replicas: 4 });
  t.like((await audits(owner.id))[0]?.details, { recommendation: 'fewer-replicas', change: { replicas: 2 } });

  // Half an hour later the load fits on one, but auto-apply changed it within the hour.
  measured.set(namespaceOf(owner.organizationId), { ...UNDERUSED, kvCacheUsageMax: 0.1 });
  clock.now = new Date(clock.now.getTime() + 30 * 60_000);
  await activities.autoApplyRecommendations();
  t.deepEqual(await row(owner.id), first, 'a second pass within the hour changes nothing');
  t.is((await audits(owner.id)).length, 1);

  clock.now = new Date(clock.now.getTime() + 31 * 60_000);
  await activities.autoApplyRecommendations();
  t.like(await row(owner.id), { replicas: 1, generation: first.generation + 1 });
  t.is((await audits(owner.id)).length, 2);
});

test.serial('with p95 time to first token above the policy\'s target, no capacity is cut', async (t) => {
  const owner = await deploymentWith(4, { autoApply: true, targetP95TimeToFirstTokenMs: 500 }, { ...UNDERUSED, p95TimeToFirstTokenSeconds: 0.8 });
  const before = await row(owner.id);
  const clock = { now: new Date() };
  await activitiesAt(clock).autoApplyRecommendations();
  t.deepEqual(await row(owner.id), before);
  t.deepEqual(await audits(owner.id), []);
  // The same deployment within its target is cut.
  measured.set(namespaceOf(owner.organizationId), UNDERUSED);
  await activitiesAt(clock).autoApplyRecommendations();
  t.is((await row(owner.id)).replicas, 2);
});

test.serial('a run of the optimization workflow makes one pass on its queue and answers what it did', async (t) => {
  const owner = await deploymentWith(2, { autoApply: true }, IDLE);
  const taskQueue = `optimization-${Date.now()}`;
  const worker = await createQueueWorker(optimizationQueue, {
    connection: await NativeConnection.connect({ address: testTemporalAddress() }), bundleDir: testBundleDir(), taskQueue,
    activities: optimizationQueue.activities({ orm: api.orm, prometheus: createPrometheusClient(prometheus.url) }),
  });
  await worker.runUntil(async () => {
    const pass = await client.workflow.execute(OPTIMIZATION_WORKFLOW, { workflowId: `optimization-${Date.now()}`, taskQueue, args: [] });
    t.like(pass, { applied: 1 });
    t.is((await row(owner.id)).replicas, 0);
  });
});
