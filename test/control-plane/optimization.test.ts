// GET, POST and PUT /v1/deployments/{id}/optimization over HTTP, against a stand-in for Prometheus's query
// API that answers every query of the optimization service with chosen figures (a long queue), or fails:
// recommendations with their evidence, applying one (a desired state sent to the deployment's workflow, an
// audit record), the policy, and the input rules, credentials and other organizations. The rules themselves
// are tested with chosen figures in optimization-rules.test.ts; real load is read end to end.
import test from 'ava';
import { addMember, createApiKey, desiredStatesSent, signup, signupWithDeployment, startTestApi, type TestApi } from '../support/control-plane.ts';
import { startPrometheusStandIn, type PrometheusStandIn } from '../support/prometheus-standin.ts';

/** Figures by the metric a query reads (and the aggregation over time, for gauges). */
const FIGURES: ReadonlyArray<[RegExp, number]> = [
  [/avg_over_time\(\(sum by \(deployment\) \(vllm:num_requests_waiting/, 6],
  [/max_over_time\(\(sum by \(deployment\) \(vllm:num_requests_waiting/, 12],
  [/avg_over_time\(\(sum by \(deployment\) \(vllm:num_requests_running/, 4],
  [/max_over_time\(\(sum by \(deployment\) \(vllm:num_requests_running/, 8],
  [/max_over_time\(\(avg by \(deployment\) \(vllm:kv_cache_usage_perc/, 0.5],
  [/avg_over_time\(\(avg by \(deployment\) \(vllm:kv_cache_usage_perc/, 0.4],
  [/up\{/, 1],
  [/time_to_first_token/, 0.8],
  [/finished_reason/, 0],
  [/request_success_total/, 1.5],
  [/generation_tokens_total/, 120],
];

let api: TestApi;
let prometheus: PrometheusStandIn;

test.before(async () => {
  prometheus = await startPrometheusStandIn((query) => {
    const deployment = /deployment="([^"]+)"/.exec(query)?.[1] ?? '';
    const value = FIGURES.find(([pattern]) => pattern.test(query))?.[1];
    return value === undefined ? [] : [{ deployment, value }];
  });
  api = await startTestApi(import.meta.filename, { config: { prometheusUrl: prometheus.url } });
});
test.after.always(async () => {
  await api?.close();
  await prometheus?.close();
});

/** A deployment its workflow reported running (no worker runs beside a test API). */
async function runningDeployment() {
  const owner = await signupWithDeployment(api);
  await api.pool.query(`UPDATE deployment SET status = 'running', current_replicas = replicas WHERE id = $1`, [owner.id]);
  return { ...owner, path: `/v1/deployments/${owner.id}/optimization` };
}

test.serial('GET: a long queue measured over the last hour recommends more replicas, with the figures, the window and the effect on cost and latency', async (t) => {
  const { token, organizationId, path } = await runningDeployment();
  const res = await api.request('GET', `${path}?orgId=${organizationId}`, { token });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { status: 'running', measured: { windowSeconds: 3600, requestsWaitingAvg: 6, requestsRunningAvg: 4, kvCacheUsageMax: 0.5, readyReplicasAvg: 1, p95TimeToFirstTokenSeconds: 0.8 } });
  t.deepEqual(res.body.policy, { deploymentId: res.body.deploymentId, targetP95TimeToFirstTokenMs: null, maxHourlyCents: null, autoApply: false, updatedAt: null });
  const [more] = res.body.recommendations;
  // 4 requests run on the one replica; the 6 waiting need 2 more.
  t.like(more, { id: 'more-replicas', change: { replicas: 3, maxReplicas: 3 }, effect: { hourlyCentsNow: 80, hourlyCentsAfter: 240, hourlyCentsChange: 160, latency: { direction: 'lower' } } });
  t.like(more.evidence, { window: { seconds: 3600, from: res.body.measured.from, to: res.body.measured.to }, figures: { requestsWaitingAvg: 6, requestsWaitingMax: 12, replicas: 1, hourlyCents: 80 } });
  t.true(prometheus.queries.some((q) => q.includes('avg_over_time((sum by (deployment) (vllm:num_requests_waiting{namespace="') && q.endsWith('[3600s:15s])')));
});

test.serial('POST applies a current recommendation through the deployment\'s update: its workflow is sent the new desired state, and the write is audited', async (t) => {
  const { token, organizationId, id, path } = await runningDeployment();
  const res = await api.request('POST', path, { token, body: { recommendation: 'more-replicas' } });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { applied: { id: 'more-replicas', change: { replicas: 3 } }, deployment: { id, replicas: 3, maxReplicas: 3 } });
  const sent = await desiredStatesSent(api, id);
  t.like(sent.at(-1), { replicas: 3, maxReplicas: 3 });
  const audit = await api.pool.query('SELECT action, resource_type, resource_id, status_code FROM audit_log WHERE organization_id = $1 AND action = $2', [organizationId, 'applyDeploymentOptimizationV1']);
  t.deepEqual(audit.rows, [{ action: 'applyDeploymentOptimizationV1', resource_type: 'deployment', resource_id: id, status_code: 200 }]);

  // One not recommended now is 422 naming the field, as one no kind names is; missing or not a string is 400.
  const stale = await api.request('POST', path, { token, body: { recommendation: 'cheaper-gpu' } });
  t.is(stale.status, 422);
  t.like(stale.body, { code: 'VALIDATION_ERROR', statusCode: 422 });
  t.regex(stale.body.message, /^Invalid field recommendation: cheaper-gpu is not among the deployment's recommendations now/);
  t.is((await api.request('POST', path, { token, body: { recommendation: 'more-gpus' } })).status, 422, 'not one of the kinds: a rule on its value');
  t.is((await api.request('POST', path, { token, body: {} })).status, 400, 'missing');
  t.is((await api.request('POST', path, { token, body: JSON.stringify('more-replicas') })).status, 400, 'not an object');
  t.is((await api.request('POST', path, { token, body: { recommendation: 'more-replicas', replicas: 9 } })).status, 400, 'unknown field');
});

test.serial('PUT sets the policy, which shapes the recommendations: a cost ceiling bounds the replicas added; auto-apply needs a target', async (t) => {
  const { token, organizationId, path } = await runningDeployment();
  const put = await api.request('PUT', path, { token, body: { maxHourlyCents: 160, targetP95TimeToFirstTokenMs: 500 } });
  t.is(put.status, 200, JSON.stringify(put.body));
  t.like(put.body, { maxHourlyCents: 160, targetP95TimeToFirstTokenMs: 500, autoApply: false });
  const got = await api.request('GET', `${path}?orgId=${organizationId}`, { token });
  t.like(got.body.policy, { maxHourlyCents: 160, targetP95TimeToFirstTokenMs: 500 });
  t.like(got.body.recommendations[0], { id: 'more-replicas', change: { replicas: 2 }, effect: { hourlyCentsAfter: 160 } });
  t.like(got.body.recommendations[0].evidence.figures, { targetP95TimeToFirstTokenMs: 500 });
  // What a PUT leaves out keeps its value; null clears.
  t.like((await api.request('PUT', path, { token, body: { autoApply: true } })).body, { autoApply: true, maxHourlyCents: 160 });
  const cleared = await api.request('PUT', path, { token, body: { maxHourlyCents: null, targetP95TimeToFirstTokenMs: null } });
  t.is(cleared.status, 422);
  t.like(cleared.body, { code: 'VALIDATION_ERROR', message: 'Invalid field autoApply: needs a targetP95TimeToFirstTokenMs or a maxHourlyCents for applied recommendations to respect' });
  t.is((await api.request('PUT', path, { token, body: { maxHourlyCents: 'cheap' } })).status, 400);
  t.is((await api.request('PUT', path, { token, body: { maxHourlyCents: -1 } })).status, 422);
  t.is((await api.request('PUT', path, { token, body: { autoApply: 'yes' } })).status, 400);
  t.is((await api.request('PUT', path, { token, body: { other: 1 } })).status, 400, 'unknown field');
});

test.serial('a deployment not serving has nothing measured and nothing recommended; Prometheus away is 503', async (t) => {
  const { token, organizationId, id } = await signupWithDeployment(api);
  const pending = await api.request('GET', `/v1/deployments/${id}/optimization?orgId=${organizationId}`, { token });
  t.is(pending.status, 200);
  t.like(pending.body, { status: 'pending', measured: null, recommendations: [] });
  const running = await runningDeployment();
  prometheus.down = true;
  try {
    const res = await api.request('GET', `${running.path}?orgId=${running.organizationId}`, { token: running.token });
    t.is(res.status, 503);
    t.is(res.headers.get('retry-after'), '10');
    t.is((await api.request('POST', running.path, { token: running.token, body: { recommendation: 'more-replicas' } })).status, 503);
  } finally {
    prometheus.down = false;
  }
});

test.serial('credentials, scopes and organizations: 401 without one, 403 for a read-only key\'s writes or a role without deployment reads, 404 for another organization\'s deployment', async (t) => {
  const owner = await runningDeployment();
  const other = await signup(api);
  const query = `?orgId=${owner.organizationId}`;
  t.is((await api.request('GET', `${owner.path}${query}`)).status, 401);
  t.is((await api.request('POST', owner.path, { body: { recommendation: 'more-replicas' } })).status, 401);
  t.is((await api.request('PUT', owner.path, { body: { autoApply: false } })).status, 401);
  t.is((await api.request('GET', owner.path, { token: owner.token })).body.message, 'Invalid query parameter orgId: required');

  const readOnly = await createApiKey(api, owner.token, 'read_only');
  t.is((await api.request('GET', `${owner.path}${query}`, { token: readOnly.key })).status, 200);
  t.is((await api.request('POST', owner.path, { token: readOnly.key, body: { recommendation: 'more-replicas' } })).status, 403);
  t.is((await api.request('PUT', owner.path, { token: readOnly.key, body: { autoApply: false } })).status, 403);
  const role = await api.request('POST', '/v1/enterprise/roles', { token: owner.token, body: { name: 'Auditor', permissions: ['audit:read'] } });
  t.is(role.status, 201, JSON.stringify(role.body));
  const auditor = await addMember(api, owner.organizationId, role.body.id);
  t.is((await api.request('GET', `${owner.path}${query}`, { token: auditor.token })).status, 403);

  const foreign = `/v1/deployments/${owner.id}/optimization`;
  t.is((await api.request('GET', `${foreign}?orgId=${other.organizationId}`, { token: other.token })).status, 404);
  t.is((await api.request('POST', foreign, { token: other.token, body: { recommendation: 'more-replicas' } })).status, 404);
  t.is((await api.request('PUT', foreign, { token: other.token, body: { autoApply: false } })).status, 404);
  t.is((await api.request('GET', `${foreign}?orgId=${owner.organizationId}`, { token: other.token })).status, 403, 'another organization\'s orgId');
});
