// `npm run bench:workflows`: the whole stack of `npm start` (embedded PostgreSQL, Temporal dev server,
// local GPU cluster, one worker, the API) in DATA_DIR/bench-workflows (emptied first), then
//  1. latency: for deployments created one at a time, the time from POST /api/deployments to the start of
//     the workflow's first Pulumi step (the applyStack activity, read from the workflow history);
//  2. throughput: a batch created at once and deleted once each has settled; deployments per minute one
//     worker drives from creation to running and back to deleted, with how each one settled (running or
//     failed, and why).
import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { startApi } from '../control-plane/main.ts';
import { startGpuCluster } from '../infra/servers/gpu-cluster.ts';
import { freePort } from '../infra/servers/process.ts';
import { startPostgres } from '../infra/servers/postgres.ts';
import { startTemporal } from '../infra/servers/temporal.ts';
import { startWorker } from '../workflows/worker.ts';

const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 10);
const BATCH = Number(process.env.BENCH_BATCH ?? 20);
const SETTLE_TIMEOUT_MS = 15 * 60_000;

const dataDir = resolve(process.env.DATA_DIR ?? '.data', 'bench-workflows');
await rm(dataDir, { recursive: true, force: true });
const signingKey = 'bench-signing-key-0123456789abcdefghijklmnop';
process.env.KILN_SIGNING_KEY = signingKey;
process.env.LOG_LEVEL ??= 'warn';
process.env.KILN_ADMIN_EMAILS = 'admin@bench.example';
console.log(`bench:workflows: servers under ${dataDir}`);
const postgres = await startPostgres({ dataDir, port: await freePort() });
const temporal = await startTemporal({ dataDir: join(dataDir, 'temporal'), port: await freePort(), uiPort: await freePort() });
const cluster = await startGpuCluster({ dataDir: join(dataDir, 'gpu-cluster'), nodePools: [{ gpuType: 'nvidia-l4', nodes: BATCH + LATENCY_SAMPLES, gpusPerNode: 1 }], podReadyDelayMs: 300 });
const api = await startApi({ databaseUrl: postgres.url, port: 0, dataDir, temporalAddress: temporal.address });
const worker = await startWorker({
  temporalAddress: temporal.address, databaseUrl: postgres.url, dataDir,
  pulumiPassphrase: 'bench-passphrase', signingKey, allowPrivateWebhookUrls: true,
});
const db = new pg.Pool({ connectionString: postgres.url, max: 2 });
const temporalClient = new Client({ connection: await Connection.connect({ address: temporal.address }) });

async function call(method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(api.url + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function newOrganization(label: string): Promise<string> {
  const session = await call('POST', '/v1/auth/signup', undefined, { email: `${label}@bench.example`, password: 'bench-password', name: label, organizationName: label });
  if (session.status !== 201) throw new Error(`sign-up failed: ${JSON.stringify(session.body)}`);
  return session.body.access_token as string;
}

async function create(token: string, name: string): Promise<string> {
  const res = await call('POST', '/api/deployments', token, { name, model: 'Qwen/Qwen2.5-0.5B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id as string;
}


/**
 * When the workflow's first Pulumi step (applyStack) started. Temporal writes a retried activity's Started
 * event only when the attempt ends, so the running attempt is read from the workflow's pending activities.
 */
async function firstPulumiStepAt(id: string): Promise<number> {
  const handle = temporalClient.workflow.getHandle(id);
  const millis = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => (t ? Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : undefined);
  for (const deadline = Date.now() + SETTLE_TIMEOUT_MS; Date.now() < deadline; await sleep(50)) {
    const description = await handle.describe().catch(() => undefined);
    const pending = description?.raw.pendingActivities?.find((a) => a.activityType?.name === 'applyStack');
    const started = millis(pending?.lastStartedTime);
    if (started) return started;
    const events = description ? (await handle.fetchHistory()).events ?? [] : [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'applyStack');
    const done = scheduled && events.find((e) => e.activityTaskStartedEventAttributes && Number(e.activityTaskStartedEventAttributes.scheduledEventId) === Number(scheduled.eventId));
    if (millis(done?.eventTime)) return millis(done?.eventTime)!;
  }
  throw new Error(`${id}: no Pulumi step started`);
}

async function waitForStatus(ids: readonly string[], statuses: readonly string[]): Promise<Map<string, { status: string; reason: string | null }>> {
  for (const deadline = Date.now() + SETTLE_TIMEOUT_MS; Date.now() < deadline; await sleep(250)) {
    const { rows } = await db.query<{ id: string; status: string; failure_reason: string | null }>('select id, status, failure_reason from deployment where id = any($1)', [ids]);
    if (rows.length === ids.length && rows.every((r) => statuses.includes(r.status))) {
      return new Map(rows.map((r) => [r.id, { status: r.status, reason: r.failure_reason }]));
    }
  }
  throw new Error(`deployments did not reach ${statuses.join('|')} in time`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)]!;

try {
  // The local cluster is where deployments land: registered by a platform administrator, as in production.
  const adminToken = await newOrganization('admin');
  const registered = await call('POST', '/v1/admin/clusters', adminToken, { provider: 'kubernetes', name: 'local', kubeconfig: await readFile(cluster.kubeconfig, 'utf8') });
  if (registered.status !== 201) throw new Error(`cluster registration failed: ${registered.status} ${JSON.stringify(registered.body)}`);

  // 1. Latency, one deployment at a time so each measures an idle worker.
  const latencyToken = await newOrganization('latency');
  const latencies: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const sentAt = Date.now();
    const id = await create(latencyToken, `latency-${i}`);
    latencies.push((await firstPulumiStepAt(id)) - sentAt);
    await waitForStatus([id], ['running', 'failed']);
  }

  // 2. Throughput: a batch through create → settled → delete → deleted on one worker.
  const batchToken = await newOrganization('batch');
  const startedAt = Date.now();
  const ids = await Promise.all(Array.from({ length: BATCH }, (_, i) => create(batchToken, `batch-${i}`)));
  const settled = await waitForStatus(ids, ['running', 'failed']);
  const settledAt = Date.now();
  await Promise.all(ids.map(async (id) => {
    const res = await call('DELETE', `/api/deployments/${id}`, batchToken);
    if (res.status !== 200) throw new Error(`delete failed: ${res.status} ${JSON.stringify(res.body)}`);
  }));
  await waitForStatus(ids, ['deleted']);
  const finishedAt = Date.now();

  const outcomes = new Map<string, number>();
  for (const { status, reason } of settled.values()) {
    const key = status === 'failed' ? `failed: ${(reason ?? '').split('\n')[0]!.slice(0, 120)}` : status;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  }
  const minutes = (finishedAt - startedAt) / 60_000;
  console.log('\nPOST /api/deployments -> first Pulumi step (applyStack started)');
  console.log(`  samples ${latencies.length}: p50 ${percentile(latencies, 50)} ms, p95 ${percentile(latencies, 95)} ms, max ${Math.max(...latencies)} ms`);
  console.log(`\nlifecycle throughput, one worker, ${BATCH} deployments created at once`);
  console.log(`  created -> settled: ${((settledAt - startedAt) / 1000).toFixed(1)} s; delete -> deleted: ${((finishedAt - settledAt) / 1000).toFixed(1)} s`);
  console.log(`  ${(BATCH / minutes).toFixed(1)} deployments/minute from creation to deleted`);
  for (const [outcome, count] of outcomes) console.log(`  settled ${outcome}: ${count}`);
} finally {
  await db.end();
  await temporalClient.connection.close();
  await api.close();
  await worker.stop();
  await cluster.stop();
  await temporal.stop();
  await postgres.stop();
}
