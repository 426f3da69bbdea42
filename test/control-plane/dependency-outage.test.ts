// The database stops answering (as a paused PostgreSQL does) under one API replica: every request to it is
// answered within seconds, a clear 503 with Retry-After, rather than hanging, and liveness and readiness say
// what is going on; when the database answers again, the replica serves again, and a create retried with its
// Idempotency-Key is made once. The other replica, on the same database, is the control.
import test from 'ava';
import { eventually } from '../support/eventually.ts';
import { freezableProxy, type FreezableProxy } from '../support/freezable-proxy.ts';
import { signup, startTestApi, validDeployment, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
let replica: TestApi;
let proxy: FreezableProxy;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
  const database = new URL(api.databaseUrl);
  proxy = await freezableProxy({ host: database.hostname, port: Number(database.port) });
  database.port = String(proxy.port);
  replica = await startTestApi(import.meta.filename, { databaseUrl: database.href });
});
test.after.always(async () => {
  proxy?.thaw();
  await replica?.close();
  await api?.close();
  await proxy?.close();
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
