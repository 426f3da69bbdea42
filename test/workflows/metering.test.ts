// Metering (workflows/metering/) on a real database: replica history written through the workflow's status
// store, intervals closed by the activity, debits drawn through the credit ledger. Exact to the cent, once per
// interval however often or concurrently it runs, a killed run resumed without charging twice, late records
// charged where they belong, low-balance notices, and the stop after the grace period. Then the Temporal
// Schedule the worker makes runs it on a worker.
import test from 'ava';
import { spawn } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { moveCredits } from '../../control-plane/billing/credit-ledger.ts';
import { createStatusStore } from '../../workflows/deployment/status-store.ts';
import type { StatusUpdate } from '../../workflows/deployment/activities.ts';
import { METERING_WORKFLOW } from '../../workflows/contract/metering.ts';
import { createMeteringActivities } from '../../workflows/metering/activities.ts';
import { meteringQueue } from '../../workflows/metering/queue.ts';
import { meteringStore } from '../../workflows/metering/store.ts';
import { createQueueWorker } from '../../workflows/queue.ts';
import { ensureSchedule } from '../../workflows/schedules.ts';
import { eventually } from '../support/eventually.ts';
import { signupWithDeployment, startTestApi, type TestApi } from '../support/control-plane.ts';
import { testBundleDir, testTemporalAddress } from '../support/temporal.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';

installTestRuntime();

let api: TestApi;
test.before(async () => { api = await startTestApi(import.meta.filename); });
test.after.always(() => api?.close());

const MINUTE = 60_000;
/** Each test meters its own hours: intervals of one organization never meet another's. */
const hour = (n: number) => Date.UTC(2026, 10, 20, n);

/** Writes the deployment's lifecycle as its workflow would, each edge at the given offset (seconds) from t0. */
async function live(deploymentId: string, t0: number, edges: Array<[seconds: number, status: StatusUpdate['status'], replicas: number]>) {
  const store = createStatusStore(api.orm);
  for (const [seconds, status, replicas] of edges) await store.record({ deploymentId, status, generation: 1, replicas, at: t0 + seconds * 1000 });
}

const metering = (now: number, overrides: { intervalMs?: number; settleMs?: number; graceMs?: number } = {}) => createMeteringActivities({
  store: meteringStore(api.orm), intervalMs: MINUTE, settleMs: 0, graceMs: 86_400_000, ...overrides, now: () => new Date(now),
});

async function ledger(organizationId: string) {
  const { rows } = await api.pool.query<{ kind: string; amount_cents: number; reference: string }>(
    `SELECT kind, amount_cents, reference FROM credit_entry WHERE organization_id = $1 ORDER BY created_at, id`, [organizationId]);
  const { rows: [org] } = await api.pool.query<{ credits_cents: number; metered_units: string }>('SELECT credits_cents, metered_units FROM organization WHERE id = $1', [organizationId]);
  const debits = rows.filter((r) => r.kind === 'debit');
  return { rows, debits, debitedCents: -debits.reduce((sum, r) => sum + r.amount_cents, 0), balance: org!.credits_cents, meteredUnits: Number(org!.metered_units) };
}

test.serial('a deployment\'s life (2 replicas, scaled to 3, stopped, started, deleted) is charged to the cent', async (t) => {
  const owner = await signupWithDeployment(api);
  const t0 = hour(1);
  // L4 at 80 cents per GPU-hour, one GPU a replica.
  await live(owner.id, t0, [
    [0, 'running', 2], [90, 'scaling', 2], [120, 'running', 3], [300, 'stopping', 3], [310, 'stopped', 0],
    [600, 'deploying', 0], [630, 'running', 3], [900, 'deleting', 3], [930, 'deleted', 0],
  ]);
  const result = await metering(t0 + 20 * MINUTE).closeDueIntervals();
  t.like(result, { intervals: 20 });

  // GPU-seconds: 2 x 90 + 2 x 30 (scaling keeps the 2 running) + 3 x 180 + 0 (stopping to start) + 3 x 270 = 1,590.
  const { rows: charges } = await api.pool.query<{ starts_at: Date; gpu_ms: string; usage_units: string; rate_cents_per_hour: number; gpu: string }>(
    'SELECT starts_at, gpu_ms, usage_units, rate_cents_per_hour, gpu FROM usage_charge WHERE organization_id = $1 ORDER BY starts_at', [owner.organizationId]);
  t.is(charges.reduce((sum, c) => sum + Number(c.gpu_ms), 0), 1_590_000);
  t.deepEqual([...new Set(charges.map((c) => `${c.gpu} ${c.rate_cents_per_hour}`))], ['nvidia-l4 80']);
  // Minute by minute: 120, 120, 180, 180, 180 GPU-seconds, nothing while stopped, then 3 x 30 s and 3 x 60 s x 4.
  t.deepEqual(charges.map((c) => [(c.starts_at.getTime() - t0) / MINUTE, Number(c.gpu_ms) / 1000]), [[0, 120], [1, 120], [2, 180], [3, 180], [4, 180], [10, 90], [11, 180], [12, 180], [13, 180], [14, 180]]);

  // 1,590 GPU-seconds x 80 cents an hour = 35.33 cents: 35 drawn, the third of a cent carried.
  const after = await ledger(owner.organizationId);
  t.is(after.meteredUnits, 1_590_000 * 80);
  t.is(after.debitedCents, 35);
  t.is(after.balance, 2_500 - 35);
  t.true(after.debits.every((d) => d.reference.startsWith('usage:usi_')));
});

test.serial('the same intervals closed again, by concurrent runs and by a replay, are charged once', async (t) => {
  const owner = await signupWithDeployment(api);
  const t0 = hour(2);
  await live(owner.id, t0, [[0, 'running', 4], [600, 'deleted', 0]]);
  const now = t0 + 10 * MINUTE;
  // Three workers at once, then a replay of the same run.
  const results = await Promise.all([metering(now).closeDueIntervals(), metering(now).closeDueIntervals(), metering(now).closeDueIntervals()]);
  const replay = await metering(now).closeDueIntervals();
  t.is(replay.intervals, 0);
  const { rows: intervals } = await api.pool.query('SELECT starts_at FROM usage_interval WHERE organization_id = $1', [owner.organizationId]);
  t.is(intervals.length, 10);
  t.true(results.reduce((sum, r) => sum + r.intervals, 0) >= 10, 'every interval was closed by some run');
  // 4 GPUs x 10 minutes x 80 cents an hour = 53.33 cents.
  const after = await ledger(owner.organizationId);
  t.is(after.debitedCents, 53);
  t.is(after.debits.length, new Set(after.debits.map((d) => d.reference)).size);
});

test.serial('a run killed midway leaves every interval it closed charged once; the next run closes the rest, nothing twice', async (t) => {
  t.timeout(120_000);
  const t0 = hour(3);
  const owners = [];
  for (let i = 0; i < 12; i++) {
    const owner = await signupWithDeployment(api);
    await live(owner.id, t0, [[0, 'running', 1 + (i % 3)], [7_200, 'deleted', 0]]);
    owners.push({ ...owner, replicas: 1 + (i % 3) });
  }
  const now = t0 + 120 * MINUTE;
  // The organizations of other tests are due too; this run closes theirs as well, which is harmless.
  const child = spawn(process.execPath, ['test/support/metering-run.ts', api.databaseUrl, String(now), String(MINUTE)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let progress = 0;
  await new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => {
    progress += chunk.toString().split('.').length - 1;
    if (progress >= 3) resolve();
  }));
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  const { rows: [partial] } = await api.pool.query<{ n: string }>(`SELECT count(*) AS n FROM usage_interval WHERE organization_id = ANY($1)`, [owners.map((o) => o.organizationId)]);
  t.true(Number(partial!.n) < owners.length * 120, `the run was killed before it closed everything (${partial!.n})`);

  await metering(now).closeDueIntervals();
  for (const owner of owners) {
    const { rows: [count] } = await api.pool.query<{ n: string; distinct_starts: string }>(
      'SELECT count(*) AS n, count(DISTINCT starts_at) AS distinct_starts FROM usage_interval WHERE organization_id = $1', [owner.organizationId]);
    t.deepEqual([Number(count!.n), Number(count!.distinct_starts)], [120, 120]);
    // Two hours of `replicas` L4 GPUs at 80 cents an hour.
    t.is((await ledger(owner.organizationId)).debitedCents, owner.replicas * 160);
  }
});

test.serial('a status record written late, before its interval settles, is charged in the interval it belongs to', async (t) => {
  const owner = await signupWithDeployment(api);
  const t0 = hour(4);
  await live(owner.id, t0, [[0, 'running', 1]]);
  const settleMs = 30_000;
  await metering(t0 + 90_000, { settleMs }).closeDueIntervals(); // closes [0, 60 s) only
  // The stop the workflow saw at 70 s is written at 130 s: [60 s, 120 s) is over but not yet settled.
  await live(owner.id, t0, [[70, 'stopped', 0]]);
  await metering(t0 + 150_000, { settleMs }).closeDueIntervals();
  const { rows } = await api.pool.query<{ starts_at: Date; gpu_ms: string }>('SELECT starts_at, gpu_ms FROM usage_charge WHERE organization_id = $1 ORDER BY starts_at', [owner.organizationId]);
  t.deepEqual(rows.map((r) => [(r.starts_at.getTime() - t0) / 1000, Number(r.gpu_ms)]), [[0, 60_000], [60, 10_000]]);
});

test.serial('low balance notices at 20% and 5% of the last top-up, then at zero; after the grace period the deployments stop and new ones are 402', async (t) => {
  const owner = await signupWithDeployment(api);
  await api.orm.em.fork().transactional(async (em) => {
    await moveCredits(em, { organizationId: owner.organizationId, kind: 'adjustment', amountCents: -2_500, description: 'test: empty the free grant', reference: 'test:empty' });
    await moveCredits(em, { organizationId: owner.organizationId, kind: 'top_up', amountCents: 100, description: 'test top-up', reference: 'test:top-up' });
  });
  const t0 = hour(5);
  // 12 L4 GPUs: 16 cents a minute. Balances 84, 68, 52, 36, 20 (20%), 4 (5%), -12 (run out).
  await live(owner.id, t0, [[0, 'running', 12]]);
  const graceMs = 5 * MINUTE;
  await metering(t0 + 7 * MINUTE, { graceMs }).closeDueIntervals();
  const notices = async () => (await api.pool.query<{ kind: string; payload: { thresholdPercent?: number; balanceCents: number; graceEndsAt?: string } }>(
    'SELECT kind, payload FROM user_notification WHERE organization_id = $1 AND user_id = $2 ORDER BY created_at, kind', [owner.organizationId, owner.userId])).rows;
  t.deepEqual((await notices()).map((n) => [n.kind, n.payload.thresholdPercent ?? null, n.payload.balanceCents]), [
    ['credits.low', 20, 20], ['credits.low', 5, 4], ['credits.exhausted', null, -12],
  ]);
  t.is((await notices())[2]!.payload.graceEndsAt, new Date(t0 + 7 * MINUTE + graceMs).toISOString());

  // At zero: a new deployment is 402 INSUFFICIENT_CREDITS; the running one keeps running through the grace period.
  const refused = await api.request('POST', '/v1/deployments', { token: owner.token, body: { name: 'another', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' } });
  t.like(refused, { status: 402, body: { code: 'INSUFFICIENT_CREDITS' } });
  const running = async () => (await api.pool.query<{ running: boolean; generation: number }>('SELECT running, generation FROM deployment WHERE id = $1', [owner.id])).rows[0]!;
  const before = await running();
  await metering(t0 + 11 * MINUTE, { graceMs }).closeDueIntervals();
  t.true((await running()).running, 'within the grace period');
  const past = await metering(t0 + 13 * MINUTE, { graceMs }).closeDueIntervals();
  t.true(past.stoppedOrganizations >= 1);
  t.deepEqual(await running(), { running: false, generation: before.generation + 1 });
  const stopNotice = (await notices()).find((n) => n.kind === 'credits.stopped');
  t.like(stopNotice?.payload, { stoppedDeployments: 1 });
  const { rows: audit } = await api.pool.query('SELECT user_id, details FROM audit_log WHERE organization_id = $1 AND action = $2', [owner.organizationId, 'deployment.stop']);
  t.like(audit[0], { user_id: 'system:billing', details: { reason: 'credits exhausted' } });
  // Stopped once: a later run stops nothing again.
  await metering(t0 + 14 * MINUTE, { graceMs }).closeDueIntervals();
  t.is((await running()).generation, before.generation + 1);
  await live(owner.id, t0, [[14 * 60, 'stopped', 0]]);
});

test.serial('the metering schedule starts runs on the worker, which close the due intervals', async (t) => {
  t.timeout(90_000);
  const owner = await signupWithDeployment(api);
  // An interval of one second, ending now: the schedule's runs close it as the seconds pass.
  await live(owner.id, Date.now() - 3_000, [[0, 'running', 1]]);
  const taskQueue = `metering-${Date.now()}`;
  const scheduleId = `test-metering-${Date.now()}`;
  const client = new Client({ connection: await Connection.connect({ address: testTemporalAddress() }) });
  const worker = await createQueueWorker(meteringQueue, {
    connection: await NativeConnection.connect({ address: testTemporalAddress() }), bundleDir: testBundleDir(), taskQueue,
    activities: meteringQueue.activities({ orm: api.orm, metering: { intervalMs: 1_000, settleMs: 0, graceMs: 86_400_000 } }),
  });
  try {
    await worker.runUntil(async () => {
      await ensureSchedule(client, { scheduleId, spec: { intervals: [{ every: '1 second' }] }, action: { type: 'startWorkflow', workflowType: METERING_WORKFLOW, taskQueue, args: [] } });
      // Made again (as by every worker start): brought up to date, not refused.
      await ensureSchedule(client, { scheduleId, spec: { intervals: [{ every: '1 second' }] }, action: { type: 'startWorkflow', workflowType: METERING_WORKFLOW, taskQueue, args: [] } });
      await eventually('three intervals closed by scheduled runs', async () => {
        const { rows } = await api.pool.query<{ n: string }>('SELECT count(*) AS n FROM usage_interval WHERE organization_id = $1', [owner.organizationId]);
        return Number(rows[0]!.n) >= 3;
      });
      const description = await client.schedule.getHandle(scheduleId).describe();
      t.true(description.info.recentActions.length >= 1);
    });
  } finally {
    await client.schedule.getHandle(scheduleId).delete();
    await client.connection.close();
  }
  t.true((await ledger(owner.organizationId)).meteredUnits > 0);
});
