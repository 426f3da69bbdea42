import test from 'ava';
import { freePort } from '../../infra/servers/process.ts';
import { createApiKey, desiredStatesSent, signup, startTestApi, type TestApi, validDeployment } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => { api = await startTestApi(import.meta.filename); });
test.after.always(() => api?.close());

/** A deployment the workflow reported failed (no worker runs here, so the failure is written as it would be). */
async function failedDeployment(name = 'broken') {
  const owner = await signup(api);
  const { body } = await api.request('POST', '/api/deployments', { token: owner.token, body: validDeployment(name) });
  await api.pool.query(`UPDATE deployment SET status = 'failed', failure_reason = '1 of 1 replicas cannot be placed' WHERE id = $1`, [body.data.id]);
  return { ...owner, id: body.data.id as string };
}

test('GET shows the failure, the events and the deployment workflow as Temporal sees it', async (t) => {
  const { token, id } = await failedDeployment();
  const res = await api.request('GET', `/v1/recovery/deployments/${id}`, { token });
  t.is(res.status, 200);
  t.like(res.body, { id, name: 'broken', status: 'failed', failureReason: '1 of 1 replicas cannot be placed', generation: 1, events: [] });
  t.is(res.body.workflow.status, 'RUNNING');
  t.deepEqual(res.body.workflow.pendingActivities, []);
});

test('with Temporal unreachable the inspection is 503 with Retry-After, soon, and the overview still answers', async (t) => {
  const { token, id, organizationId } = await failedDeployment('unreachable');
  const cut = await startTestApi(import.meta.filename, { databaseUrl: api.databaseUrl, orchestratorTemporalAddress: `127.0.0.1:${await freePort()}` });
  try {
    const started = Date.now();
    const res = await cut.request('GET', `/v1/recovery/deployments/${id}`, { token });
    t.is(res.status, 503);
    t.like(res.body, { code: 'SERVICE_UNAVAILABLE', message: 'The workflow service is unavailable: try again shortly' });
    t.is(res.headers.get('retry-after'), '5');
    t.true(Date.now() - started < 10_000, `answered after ${Date.now() - started} ms`);
    // The document lists it, with its Retry-After.
    const inspect = (await cut.request('GET', '/v1/openapi')).body.paths['/v1/recovery/deployments/{id}'].get;
    t.like(inspect.responses['503'], { description: 'Service Unavailable', headers: { 'Retry-After': { schema: { type: 'integer' } } } });
    t.is((await cut.request('GET', `/v1/recovery?orgId=${organizationId}`, { token })).status, 200);
  } finally {
    await cut.close();
  }
});

test('retry and refresh_and_retry send a new desired state; a deployment that has not failed is 409', async (t) => {
  const { token, id } = await failedDeployment();
  t.is((await api.request('POST', `/v1/recovery/deployments/${id}`, { token, body: { action: 'refresh_and_retry' } })).status, 200);
  const sent = await desiredStatesSent(api, id);
  t.like(sent.at(-1), { generation: 2, refreshes: 1, deleted: false });

  await api.pool.query(`UPDATE deployment SET status = 'running' WHERE id = $1`, [id]);
  const refused = await api.request('POST', `/v1/recovery/deployments/${id}`, { token, body: { action: 'retry' } });
  t.is(refused.status, 409);
  t.is((await desiredStatesSent(api, id)).length, sent.length, 'nothing more was sent');
});

test('force_delete asks the workflow to delete even if the teardown fails; DELETE clears the failure', async (t) => {
  const { token, id } = await failedDeployment();
  const cleared = await api.request('DELETE', `/v1/recovery/deployments/${id}`, { token });
  t.like(cleared.body, { id, status: 'failed', failureReason: null });
  const forced = await api.request('POST', `/v1/recovery/deployments/${id}`, { token, body: { action: 'force_delete' } });
  t.like(forced.body, { id, status: 'deleting' });
  t.like((await desiredStatesSent(api, id)).at(-1), { generation: 2, deleted: true, forceDelete: true });
});

test('the overview lists failed deployments and bulk retry answers per deployment', async (t) => {
  const { token, id, organizationId } = await failedDeployment('first');
  const { body } = await api.request('POST', '/api/deployments', { token, body: validDeployment('healthy') });
  const overview = await api.request('GET', `/v1/recovery?orgId=${organizationId}`, { token });
  t.deepEqual(overview.body.failed.map((d: { id: string }) => d.id), [id]);
  const bulk = await api.request('POST', '/v1/recovery', { token, body: { action: 'retry', ids: [id, body.data.id, 'dep_unknown'] } });
  t.deepEqual(bulk.body.results, [
    { id, outcome: 'retried' }, { id: body.data.id, outcome: 'not_failed' }, { id: 'dep_unknown', outcome: 'not_found' },
  ]);
});

test('an unknown action is 422, a missing one 400; no credential 401; a read-only key may look but not act (403); another organization gets 404', async (t) => {
  const { token, id } = await failedDeployment();
  const bad = await api.request('POST', `/v1/recovery/deployments/${id}`, { token, body: { action: 'pray' } });
  t.is(bad.status, 422);
  t.is(bad.body.code, 'VALIDATION_ERROR');
  t.is((await api.request('POST', `/v1/recovery/deployments/${id}`, { token, body: {} })).status, 400);
  t.is((await api.request('GET', `/v1/recovery/deployments/${id}`)).status, 401);
  const readOnly = await createApiKey(api, token, 'read_only');
  t.is((await api.request('GET', `/v1/recovery/deployments/${id}`, { token: readOnly.key })).status, 200);
  const refused = await api.request('POST', `/v1/recovery/deployments/${id}`, { token: readOnly.key, body: { action: 'retry' } });
  t.is(refused.status, 403);
  t.is(refused.body.code, 'INSUFFICIENT_PERMISSIONS');
  const other = await signup(api, 'other');
  for (const [method, body] of [['GET', undefined], ['POST', { action: 'retry' }], ['DELETE', undefined]] as const) {
    const res = await api.request(method, `/v1/recovery/deployments/${id}`, { token: other.token, body });
    t.is(res.status, 404, method);
    t.is(res.body.code, 'DEPLOYMENT_NOT_FOUND');
  }
  t.deepEqual((await api.request('GET', `/v1/recovery?orgId=${other.organizationId}`, { token: other.token })).body.failed, []);
});
