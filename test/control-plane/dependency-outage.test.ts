// The database stops answering (as a paused PostgreSQL does) under one API replica: every request to it is
// answered within seconds, a clear 503 with Retry-After, rather than hanging, and liveness and readiness say
// what is going on; when the database answers again, the replica serves again, and a create retried with its
// Idempotency-Key is made once. The other replica, on the same database, is the control.
// Temporal stops answering under another API (its own database): every request is still answered within a
// second, the change recorded and its workflow started or signalled once Temporal answers again.
import test from 'ava';
import { signupAdmin } from '../support/admin.ts';
import { eventually } from '../support/eventually.ts';
import { freezableProxy, type FreezableProxy } from '../support/freezable-proxy.ts';
import { signup, startTestApi, validDeployment, type TestApi } from '../support/control-plane.ts';
import { testTemporalAddress } from '../support/temporal.ts';

let api: TestApi;
let replica: TestApi;
let proxy: FreezableProxy;
/** An API whose Temporal is reached through `temporalProxy`, on a database of its own (no other API delivers its changes). */
let away: TestApi;
let temporalProxy: FreezableProxy;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
  const database = new URL(api.databaseUrl);
  proxy = await freezableProxy({ host: database.hostname, port: Number(database.port) });
  database.port = String(proxy.port);
  replica = await startTestApi(import.meta.filename, { databaseUrl: database.href });
  const temporal = new URL(`grpc://${testTemporalAddress()}`);
  temporalProxy = await freezableProxy({ host: temporal.hostname, port: Number(temporal.port) });
  away = await startTestApi(import.meta.filename, { orchestratorTemporalAddress: `127.0.0.1:${temporalProxy.port}` });
});
test.after.always(async () => {
  proxy?.thaw();
  temporalProxy?.thaw();
  await away?.close();
  await replica?.close();
  await api?.close();
  await proxy?.close();
  await temporalProxy?.close();
});

/** A request that must be answered within `ms`: how long it took, and the answer. */
async function answeredWithin(ms: number, request: () => Promise<{ status: number; headers: Headers; body: unknown }>) {
  const started = performance.now();
  const answer = await Promise.race([request(), new Promise<undefined>((resolve) => setTimeout(resolve, ms))]);
  return { answer, ms: Math.round(performance.now() - started) };
}

test.serial('with the database paused, every request is answered 503 with Retry-After within seconds; once it is back, nothing was lost', async (t) => {
  const owner = await signup(replica, 'outage');
  t.like((await replica.request('GET', '/v1/health/ready')).body, { status: 'ready', checks: { database: { status: 'ok' }, temporal: { status: 'ok' } } });

  proxy.freeze();
  const create = () => replica.request('POST', '/api/deployments', { token: owner.token, body: validDeployment('outage'), headers: { 'Idempotency-Key': 'outage-create' } });
  // Sent as the database stops answering: each waits on it until the replica sees it gone.
  const inFlight = await Promise.all([
    answeredWithin(4_000, () => replica.request('GET', '/api/deployments', { token: owner.token })),
    answeredWithin(4_000, create),
  ]);
  t.log(`answered in ${inFlight.map((r) => r.ms).join(', ')} ms`);
  for (const { answer } of inFlight) {
    t.is(answer?.status, 503);
    t.is(answer?.headers.get('retry-after'), '5');
  }
  t.like(inFlight[0]!.answer?.body, { success: false, error: { code: 'SERVICE_UNAVAILABLE' } });
  // Sent once the loss is known: answered at once.
  const after = await answeredWithin(1_000, () => replica.request('GET', '/v1/deployments?limit=1', { token: owner.token }));
  t.is(after.answer?.status, 503);
  const health = await replica.request('GET', '/api/health');
  t.is(health.status, 503);
  t.is(health.headers.get('retry-after'), '5');
  t.like((await replica.request('GET', '/v1/health/live')).body, { status: 'alive' });
  const ready = await replica.request('GET', '/api/health/ready');
  t.is(ready.status, 503);
  t.like(ready.body.error.details, { checks: { database: { status: 'unavailable' }, temporal: { status: 'ok' } } });
  // The other replica, on the same database, serves on.
  t.is((await api.request('GET', '/api/health/ready')).status, 200);

  proxy.thaw();
  await eventually('the replica ready again', async () => ((await replica.request('GET', '/v1/health/ready')).status === 200 ? true : undefined), 30_000);
  // The create retried with its key: made once (answered 201 now, or replayed if the first went through after all).
  const retried = await eventually('the create retried', async () => {
    const res = await create();
    return res.status === 201 ? res : undefined;
  }, 30_000);
  const listed = await replica.request('GET', '/api/deployments?limit=20', { token: owner.token });
  t.deepEqual((listed.body.data as { id: string; name: string }[]).filter((d) => d.name === 'outage').map((d) => d.id), [retried.body.data.id]);
});

test('liveness and readiness need no credential, and readiness names each dependency', async (t) => {
  const live = await api.request('GET', '/api/health/live');
  t.is(live.status, 200);
  t.like(live.body, { success: true, data: { status: 'alive' } });
  const ready = await api.request('GET', '/v1/health/ready');
  t.is(ready.status, 200);
  t.is(typeof ready.body.checks.database.since, 'string');
  t.is((await api.request('POST', '/v1/health/ready')).status, 405);
});

const awsCluster = (name: string) => ({
  provider: 'aws', name, region: 'us-east-1', subnetIds: ['subnet-0123abcd', 'subnet-4567ef01'],
  nodeGroups: [{ gpuType: 'nvidia-a100-80gb', minSize: 0, desiredSize: 1, maxSize: 2 }],
});

/** A request's answer and how long it took (ms). */
async function timed<T>(request: () => Promise<T>): Promise<{ answer: T; ms: number }> {
  const started = performance.now();
  const answer = await request();
  return { answer, ms: Math.round(performance.now() - started) };
}

test.serial('with Temporal away, cluster create and delete, report generate and deployment create answer within a second; once it is back, each reaches its workflow', async (t) => {
  const admin = await signupAdmin(away);
  const owner = await signup(away, 'temporal-away');
  // Made while Temporal answers, deleted while it is away.
  const doomed = await away.request('POST', '/v1/admin/clusters', { token: admin.token, body: awsCluster('eks-doomed') });
  t.is(doomed.status, 201);
  await eventually('sent', async () => (await away.pool.query('SELECT sent_generation FROM gpu_cluster WHERE id = $1', [doomed.body.id])).rows[0].sent_generation === 1);

  temporalProxy.freeze();
  // Sent as Temporal stops answering, before the dependency monitor has seen it: the deadline bounds it.
  const first = await timed(() => away.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('first-away') }));
  t.is(first.answer.status, 201);
  await eventually('the monitor to see Temporal gone', async () => (await away.request('GET', '/v1/health/ready')).body?.checks?.temporal?.status === 'unavailable' || undefined, 30_000);

  const cluster = await timed(() => away.request('POST', '/v1/admin/clusters', { token: admin.token, body: awsCluster('eks-away') }));
  const deleted = await timed(() => away.request('DELETE', `/v1/admin/clusters/${doomed.body.id}`, { token: admin.token }));
  const report = await timed(() => away.request('POST', '/v1/admin/reports/generate', { token: admin.token, body: { kind: 'customers' } }));
  const deployment = await timed(() => away.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('away') }));
  t.log(`with Temporal away: deployment create as it went ${first.ms} ms; then cluster create ${cluster.ms} ms, cluster delete ${deleted.ms} ms, report generate ${report.ms} ms, deployment create ${deployment.ms} ms`);
  for (const { ms } of [first, cluster, deleted, report, deployment]) t.true(ms < 5_000, `answered in ${ms} ms`);

  t.is(cluster.answer.status, 201);
  t.like(cluster.answer.body, { provider: 'aws', status: 'provisioning' });
  t.is(deleted.answer.status, 200);
  t.like(deleted.answer.body, { status: 'deleting' });
  t.is(report.answer.status, 201);
  t.like(report.answer.body, { kind: 'customers', status: 'pending', error: null });
  t.is(deployment.answer.status, 201);
  t.like(deployment.answer.body, { name: 'away', status: 'pending' });
  // Recorded, not yet sent.
  const clusters = (await away.pool.query('SELECT id, generation, sent_generation, delete_requested FROM gpu_cluster WHERE id = ANY($1) ORDER BY name', [[doomed.body.id, cluster.answer.body.id]])).rows;
  t.deepEqual(clusters, [
    { id: cluster.answer.body.id, generation: 1, sent_generation: 0, delete_requested: false },
    { id: doomed.body.id, generation: 2, sent_generation: 1, delete_requested: true },
  ]);
  t.like((await away.pool.query('SELECT status, workflow_started_at FROM report WHERE id = $1', [report.answer.body.id])).rows[0], { status: 'pending', workflow_started_at: null });
  const deployments = (await away.pool.query(`SELECT name, generation, sent_generation FROM deployment WHERE name IN ('first-away', 'away') ORDER BY name`)).rows;
  t.deepEqual(deployments, [{ name: 'away', generation: 1, sent_generation: 0 }, { name: 'first-away', generation: 1, sent_generation: 0 }]);

  temporalProxy.thaw();
  // The loops deliver what was saved: the clusters' desired states, the report's start, the deployments'.
  await eventually('every change delivered', async () => {
    const unsent = (await away.pool.query(`SELECT (SELECT count(*) FROM gpu_cluster WHERE generation > sent_generation AND provider = 'aws')
      + (SELECT count(*) FROM deployment WHERE generation > sent_generation) + (SELECT count(*) FROM report WHERE workflow_started_at IS NULL) AS n`)).rows[0].n;
    return Number(unsent) === 0 || undefined;
  }, 90_000);
  // Their workflows run (no worker of this file takes them up: the report's is test/control-plane/admin-reports.test.ts's
  // to write, the clusters' the workflow tests'); ended here, so no other file's worker takes them up.
  const started = [cluster.answer.body.id, doomed.body.id, report.answer.body.id, ...(await away.pool.query(`SELECT id FROM deployment WHERE name IN ('first-away', 'away')`)).rows.map((r) => r.id as string)];
  for (const id of started) {
    const handle = away.workflows.workflow.getHandle(id);
    const { status } = await handle.describe();
    t.truthy(status.name, id);
    if (status.name === 'RUNNING') await handle.terminate('test over');
  }
});
