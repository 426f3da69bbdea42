// `npm run bench:workflows`: the whole stack of `npm start` (embedded PostgreSQL, Temporal dev server,
// local GPU cluster, one worker, the API) in DATA_DIR/bench-workflows (emptied first), then
//  1. latency: for deployments created one at a time, the time from POST /api/deployments to the start of
//     the workflow's first Pulumi step (the applyStack activity, read from the workflow history);
//  2. throughput: a batch created at once and deleted once each has settled; deployments per minute one
//     worker drives from creation to running and back to deleted, with how each one settled (running or
//     failed, and why);
//  3. the dry run's preview: POST /v1/deployments/validate, the checks alone (?preview=false) as the baseline,
//     then with the real `pulumi preview` the worker runs, one at a time: request time and the preview's own.
import pg from 'pg';
import { startBenchStack } from './support/bench-stack.ts';

const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 10);
const PREVIEW_SAMPLES = Number(process.env.BENCH_PREVIEW_SAMPLES ?? 5);
const BATCH = Number(process.env.BENCH_BATCH ?? 20);
const SETTLE_TIMEOUT_MS = 15 * 60_000;

const stack = await startBenchStack('bench-workflows', [{ gpuType: 'nvidia-l4', nodes: BATCH + LATENCY_SAMPLES, gpusPerNode: 1 }]);
const { call, temporal: temporalClient } = stack;
const db = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
const newOrganization = async (label: string) => (await stack.newOrganization(label)).token;

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

  // 3. The dry run: the checks alone, then with the preview, one request at a time.
  const dryRunToken = await newOrganization('dry-run');
  const request = { name: 'preview', model: 'Qwen/Qwen2.5-0.5B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' };
  const dryRun = async (preview: boolean) => {
    const sentAt = Date.now();
    const res = await call('POST', `/v1/deployments/validate?preview=${preview}`, dryRunToken, request);
    if (res.status !== 200 || !res.body.valid) throw new Error(`dry run failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { ms: Date.now() - sentAt, previewMs: res.body.plan?.previewMs as number | undefined, resources: res.body.plan?.resources.length as number | undefined };
  };
  const checksOnly = [];
  for (let i = 0; i < PREVIEW_SAMPLES * 4; i++) checksOnly.push((await dryRun(false)).ms);
  const previews = [];
  for (let i = 0; i < PREVIEW_SAMPLES; i++) previews.push(await dryRun(true));
  const requestMs = previews.map((p) => p.ms);
  const previewMs = previews.map((p) => p.previewMs!);
  console.log('\nPOST /v1/deployments/validate (dry run)');
  console.log(`  checks alone (?preview=false, the baseline): samples ${checksOnly.length}, p50 ${percentile(checksOnly, 50)} ms, p95 ${percentile(checksOnly, 95)} ms`);
  console.log(`  with pulumi preview: samples ${previews.length}, request p50 ${percentile(requestMs, 50)} ms, p95 ${percentile(requestMs, 95)} ms; `
    + `preview itself p50 ${percentile(previewMs, 50)} ms, p95 ${percentile(previewMs, 95)} ms; ${previews[0]!.resources} objects planned`);
  console.log(`  the preview adds ${(percentile(requestMs, 50) / Math.max(1, percentile(checksOnly, 50))).toFixed(0)}x the checks' median`);
} finally {
  await db.end();
  await stack.stop();
}
