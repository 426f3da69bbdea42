// The inference gateway as a process of its own (gateway/): what its lean middleware promises beyond the
// inference routes it shares with the API (test/control-plane/inference.test.ts runs those through a gateway):
// a revoked key is refused within seconds, rate limits are shared with the API and the other gateways through
// the database, it serves with the API gone, and while its database is paused it keeps serving what it has
// served before and answers the rest 503 within 2 s. Model servers are stand-ins on Pod objects of a real
// local cluster (test/support/model-pods.ts).
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import pg from 'pg';
import { type Plan, type PlanLimit, PLANS } from '../../catalog/plans.ts';
import { CREDENTIAL_CACHE_MS } from '../../control-plane/auth/credential-cache.ts';
import { RATE_COUNT_FLUSH_MS, TARGET_FRESH_MS } from '../../gateway/app.ts';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { signupAdmin } from '../support/admin.ts';
import { createApiKey, signup, startTestApi, startTestGateway, type TestApi, type TestGateway, validDeployment } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { freezableProxy, type FreezableProxy } from '../support/freezable-proxy.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';
import { createModelPods } from '../support/model-pods.ts';

let api: TestApi;
let gateway: TestGateway;
let gpuCluster: GpuCluster;
const { nextAddress, startFakeModelServer, podOf, closeAll } = createModelPods(() => gpuCluster, 2);
const extraGateways: TestGateway[] = [];
const proxies: FreezableProxy[] = [];

test.before(async () => {
  [api, gpuCluster] = await Promise.all([startTestApi(import.meta.filename, { defaultCluster: false }), startTestGpuCluster()]);
  gateway = await startTestGateway(api);
  const admin = (await signupAdmin(api)).token;
  const kubeconfig = await readFile(gpuCluster.kubeconfig, 'utf8');
  const registered = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'kubernetes', name: 'local', kubeconfig } });
  if (registered.status !== 201) throw new Error(`cluster registration failed: ${JSON.stringify(registered.body)}`);
});
test.after.always(async () => {
  for (const proxy of proxies) proxy.thaw();
  await Promise.all([gateway, ...extraGateways].map((g) => g?.close()));
  await api?.close();
  await Promise.all(proxies.map((p) => p.close()));
  await gpuCluster?.stop();
  await closeAll();
});

/** A new organization with a running deployment answered by a model server of its own, and a deployments-only key. */
async function servingDeployment(name = 'chat') {
  const owner = await signup(api);
  const created = await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment(name) });
  if (created.status !== 201) throw new Error(`deployment creation failed: ${JSON.stringify(created.body)}`);
  await api.pool.query(`UPDATE deployment SET status = 'running' WHERE id = $1`, [created.body.id]);
  const server = await startFakeModelServer(nextAddress());
  await podOf({ organizationId: owner.organizationId, name }, server.address);
  const key = await createApiKey(api, owner.token, 'deployments_only');
  return { ...owner, id: created.body.id as string, name, key: key.key, keyId: key.id, server };
}

const chat = (deployment: string) => ({ deployment, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8 });

/** A request that must be answered within `ms`: its answer (undefined when it was not) and how long it took. */
async function answeredWithin<T>(ms: number, request: () => Promise<T>) {
  const started = performance.now();
  const answer = await Promise.race([request(), sleep(ms).then(() => undefined)]);
  return { answer, ms: Math.round(performance.now() - started) };
}

test.serial('liveness and readiness; anything but inference is not the gateway\'s (404)', async (t) => {
  t.like((await gateway.request('GET', '/v1/health/live')).body, { status: 'alive' });
  t.like((await gateway.request('GET', '/v1/health/ready')).body, { status: 'ready', checks: { database: { status: 'ok' } } });
  const deployment = await servingDeployment();
  const listed = await gateway.request('GET', '/v1/deployments', { token: deployment.key });
  t.is(listed.status, 404);
  t.like(listed.body, { code: 'NOT_FOUND' });
});

test.serial('a key revoked through the API is refused by the gateway within the credential cache\'s time', async (t) => {
  const deployment = await servingDeployment();
  t.is((await gateway.request('POST', '/v1/inference', { token: deployment.key, body: chat(deployment.id) })).status, 200);
  t.is((await api.request('DELETE', `/v1/settings/api-keys?id=${deployment.keyId}`, { token: deployment.token })).status, 200);
  const revokedAt = performance.now();
  const refused = await eventually('the revoked key refused', async () => {
    const res = await gateway.request('POST', '/v1/inference', { token: deployment.key, body: chat(deployment.id) });
    return res.status === 401 ? res : undefined;
  }, CREDENTIAL_CACHE_MS + 5_000);
  const seconds = (performance.now() - revokedAt) / 1000;
  t.log(`refused ${seconds.toFixed(1)} s after the revocation`);
  t.true(seconds <= CREDENTIAL_CACHE_MS / 1000 + 1, `refused after ${seconds.toFixed(1)} s`);
  t.like(refused.body, { code: 'INVALID_API_KEY' });
});

test.serial('a deployment stopped, then deleted, is refused by the gateway within TARGET_FRESH_MS of the change', async (t) => {
  const deployment = await servingDeployment();
  const send = () => gateway.request('POST', '/v1/inference', { token: deployment.key, body: chat(deployment.id) });
  t.is((await send()).status, 200);
  await api.pool.query(`UPDATE deployment SET status = 'stopped' WHERE id = $1`, [deployment.id]);
  const stoppedAt = performance.now();
  const stopped = await eventually('the stopped deployment refused', async () => {
    const res = await send();
    return res.status === 409 ? res : undefined;
  }, 10_000);
  const seconds = (performance.now() - stoppedAt) / 1000;
  t.log(`stop seen after ${seconds.toFixed(2)} s`);
  t.true(seconds <= TARGET_FRESH_MS / 1000 + 1, `seen after ${seconds.toFixed(2)} s`);
  t.like(stopped.body, { code: 'DEPLOYMENT_NOT_RUNNING' });
  await api.pool.query(`UPDATE deployment SET status = 'running', deleted_at = now() WHERE id = $1`, [deployment.id]);
  t.like((await send()).body, { code: 'DEPLOYMENT_NOT_FOUND' }, 'a refusal is not remembered: the next request looks up again');
});

test.serial('rate limits are shared: two gateways count against one budget per key, in the rows every API replica counts in', async (t) => {
  const limits = Object.fromEntries(PLANS.map((plan) => [plan, { perMinute: 6, burst: 6 }])) as Record<Plan, PlanLimit>;
  const [one, two] = await Promise.all([startTestGateway(api, { rateLimits: limits }), startTestGateway(api, { rateLimits: limits })]);
  extraGateways.push(one, two);
  const deployment = await servingDeployment();
  const send = (g: TestGateway) => g.request('POST', '/v1/inference', { token: deployment.key, body: chat(deployment.id) });
  for (let i = 0; i < 6; i++) t.is((await send(one)).status, 200, `request ${i + 1} of 6 through the first gateway`);
  t.is((await send(one)).status, 429, 'the first gateway counted its own');
  await sleep(RATE_COUNT_FLUSH_MS * 3);
  // The second gateway admits what it sends before its first flush, then knows the shared count.
  const first = await send(two);
  await sleep(RATE_COUNT_FLUSH_MS * 3);
  const refused = await send(two);
  t.is(refused.status, 429, `the second gateway refuses once it has flushed (its first answer was ${first.status})`);
  t.like(refused.body, { code: 'RATE_LIMIT_EXCEEDED' });
  t.truthy(refused.headers.get('retry-after'));
  t.is(refused.headers.get('x-ratelimit-limit'), '6');
  const { rows } = await api.pool.query<{ points: number }>(`SELECT points FROM rate_limit WHERE key LIKE $1`, [`%:inference:key:${deployment.keyId}`]);
  t.true(rows[0]!.points >= 8, `the shared row counted every request (${rows[0]?.points})`);
  t.is(deployment.server.received.length, first.status === 200 ? 7 : 6, 'only admitted requests reached the model server');
});

test.serial('with its database paused, a gateway serves what it served before within 2 s, answers the rest 503, and stays ready', async (t) => {
  const database = new URL(api.databaseUrl);
  const proxy = await freezableProxy({ host: database.hostname, port: Number(database.port) });
  proxies.push(proxy);
  database.port = String(proxy.port);
  const paused = await startTestGateway(api, { databaseUrl: database.href });
  extraGateways.push(paused);
  const known = await servingDeployment('known');
  const unknown = await servingDeployment('unknown');
  const send = (d: { key: string; id: string }) => paused.request('POST', '/v1/inference', { token: d.key, body: chat(d.id) });
  t.is((await send(known)).status, 200);

  proxy.freeze();
  const frozenAt = new Date();
  // Past the credential cache's time: the key's entry has run out, and is answered still.
  await sleep(CREDENTIAL_CACHE_MS + 500);
  const served = await answeredWithin(2_000, () => send(known));
  t.log(`a known deployment answered in ${served.ms} ms with the database paused`);
  t.is(served.answer?.status, 200, JSON.stringify(served.answer?.body));
  t.like(served.answer?.body, { object: 'chat.completion' });
  const refused = await answeredWithin(2_000, () => send(unknown));
  t.log(`an unknown credential answered in ${refused.ms} ms`);
  t.is(refused.answer?.status, 503);
  t.like(refused.answer?.body, { code: 'SERVICE_UNAVAILABLE' });
  t.is(refused.answer?.headers.get('retry-after'), '5');
  const ready = await paused.request('GET', '/v1/health/ready');
  t.is(ready.status, 200);
  t.like(ready.body, { status: 'ready', checks: { database: { status: 'unavailable' } } });

  const thawedAt = new Date();
  proxy.thaw();
  // Back: the lookups decide again, and the records queued meanwhile are written.
  await api.pool.query(`UPDATE deployment SET status = 'stopped' WHERE id = $1`, [known.id]);
  const stopped = await eventually('the stopped deployment refused', async () => {
    const res = await send(known);
    return res.status === 409 ? res : undefined;
  }, 10_000);
  t.like(stopped.body, { code: 'DEPLOYMENT_NOT_RUNNING' });
  t.is((await send(unknown)).status, 200);
  const record = await eventually('the record of the request answered while paused', async () => {
    const { rows } = await api.pool.query(
      `SELECT details FROM audit_log WHERE resource_id = $1 AND action = 'inferV1' AND status_code = 200 AND created_at BETWEEN $2 AND $3`,
      [known.id, frozenAt, thawedAt]);
    return rows[0];
  }, 10_000);
  t.like(record.details, { promptTokens: 7, completionTokens: 3, completed: true });
});

// Last: it stops the API.
test.serial('the gateway answers with the API stopped; the audit records of its requests are written after the answers', async (t) => {
  const deployment = await servingDeployment();
  const { databaseUrl } = api;
  await api.close();
  api = undefined!;
  const res = await gateway.request('POST', '/v1/inference', { token: deployment.key, body: chat(deployment.id) });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { object: 'chat.completion' });
  const database = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  t.teardown(() => database.end());
  const record = await eventually('the audit record', async () => {
    const { rows } = await database.query(`SELECT status_code, api_key_id, details FROM audit_log WHERE resource_id = $1 AND action = 'inferV1'`, [deployment.id]);
    return rows[0];
  }, 10_000);
  t.like(record, { status_code: 200, api_key_id: deployment.keyId, details: { promptTokens: 7, completionTokens: 3 } });
});
