// `npm run bench:e2e`: the main job end to end on the local cluster, in DATA_DIR/bench-e2e (emptied first):
//  1. 20 deployments created at once, POST -> running: median and worst, split into Temporal (POST to the
//     first Pulumi step), Pulumi (the applyStack activity) and pod start (waitUntilReady), from each
//     workflow's history, and the CPU-seconds per `pulumi up`; twice in the same run: with a fresh operation
//     process per operation, all at once (the baseline, as before the operation pool), then pooled;
//  2. where one `pulumi up` spends its time: CLI start, Kubernetes plugin start, engine, state write; and the
//     Kubernetes provider plugin's memory (its largest RSS, sampled during step 1, and at start);
//  3. inference through Kiln against the same requests sent straight to the simulated model server, in one
//     run: the latency Kiln adds to the first token (p50, p99) and the streamed tokens/s it keeps;
//  4. 100 deployments created at once: when the last is running, and GET /api/deployments of another
//     organization meanwhile (p50, p99), beside the same reads on the idle API just before;
//  5. churn: creates, scales and deletes mixed, 120 a minute for 5 minutes against one worker: how many
//     settled (running at the asked replicas, or gone), their time to settle, and any failure;
//  6. unschedulable -> running through a pool's growth, median of 5: on a `local` cluster whose pool of one-GPU
//     T4 nodes is one node short, POST -> running while the rollout grows the pool by a node (its pods wait out
//     the unschedulable grace, the cluster's workflow adds the node); against the same deployment once the nodes
//     are there, in the same run. BENCH_E2E_ONLY=growth runs this row alone.
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { EngineEvent } from '@pulumi/pulumi/automation/index.js';
import { pulumiHome, toolDir } from '../infra/tools/paths.ts';
import { pluginBinary } from '../infra/tools/pulumi-plugins.ts';
import { PULUMI_PLUGINS } from '../infra/tools/versions.ts';
import { openStack, upReadingEvents } from '../workflows/pulumi/automation.ts';
import { deploymentProgram, ensureNamespace } from '../workflows/deployment/program.ts';
import { startBenchStack } from './support/bench-stack.ts';
import { percentile, streamedCompletion } from './support/streamed-completion.ts';
import { namespaceOf } from '../workflows/contract/deployment.ts';
import { workerMetrics } from '../workflows/metrics.ts';

const DEPLOYMENTS = Number(process.env.BENCH_DEPLOYMENTS ?? 20);
const PULUMI_SAMPLES = Number(process.env.BENCH_PULUMI_SAMPLES ?? 3);
const INFERENCE_REQUESTS = Number(process.env.BENCH_INFERENCE_REQUESTS ?? 100);
const MAX_TOKENS = 64;
const BURST = Number(process.env.BENCH_BURST ?? 100);
// The burst is followed by one page of the deployments list (at most 100).
if (!(BURST >= 1 && BURST <= 100)) throw new Error('BENCH_BURST is 1 to 100: the burst is followed by one page of the list');
const CHURN_SECONDS = Number(process.env.BENCH_CHURN_SECONDS ?? 300);
const CHURN_PER_MINUTE = Number(process.env.BENCH_CHURN_PER_MINUTE ?? 120);
/** The churn's live deployments at most (each may run 2 replicas). */
const CHURN_LIVE = 40;
/** Step 6: trials of each kind, and the unschedulable grace the worker runs them with. */
const GROWTH_TRIALS = Number(process.env.BENCH_GROWTH_TRIALS ?? 5);
const GROWTH_GRACE_SECONDS = Number(process.env.BENCH_GROWTH_GRACE_SECONDS ?? 5);
/** `growth`: step 6 alone. */
const ONLY = process.env.BENCH_E2E_ONLY;
if (ONLY !== undefined && ONLY !== 'growth') throw new Error('BENCH_E2E_ONLY is `growth` (step 6 alone) or unset (every step)');

const GPUS = 2 * DEPLOYMENTS + PULUMI_SAMPLES + BURST + 2 * CHURN_LIVE + 2;
const stack = await startBenchStack('bench-e2e', [{ gpuType: 'nvidia-l4', nodes: Math.ceil(GPUS / 8), gpusPerNode: 8 }]);
const { call, cluster, dataDir, newOrganization, temporal: temporalClient } = stack;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (values: number[]) => percentile(values, 50);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;

/** RSS of each running Kubernetes provider plugin, from /proc (the kernel truncates its name to 15 characters). */
async function providerRssKb(): Promise<number[]> {
  const found: number[] = [];
  for (const pid of (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry))) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    if (!/^Name:\s+pulumi-resource/m.test(status)) continue;
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status);
    if (rss) found.push(Number(rss[1]));
  }
  return found;
}

/** Start and end of each activity type's last attempt in a workflow's history, in epoch ms. */
async function activitySpans(id: string): Promise<Map<string, { started: number; ended: number }>> {
  const millis = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => (t ? Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0);
  const events = (await temporalClient.workflow.getHandle(id).fetchHistory()).events ?? [];
  const scheduled = new Map<number, string>();
  const started = new Map<number, number>();
  const spans = new Map<string, { started: number; ended: number }>();
  for (const e of events) {
    if (e.activityTaskScheduledEventAttributes) scheduled.set(Number(e.eventId), e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
    if (e.activityTaskStartedEventAttributes) started.set(Number(e.activityTaskStartedEventAttributes.scheduledEventId), millis(e.eventTime));
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const name = scheduled.get(Number(done.scheduledEventId))!;
      if (!spans.has(name)) spans.set(name, { started: started.get(Number(done.scheduledEventId))!, ended: millis(e.eventTime) });
    }
  }
  return spans;
}

async function statusOf(token: string, id: string) {
  return (await call('GET', `/api/deployments/${id}`, token)).body.data as { status: string; failureReason: string | null };
}

/** How the worker ran its Pulumi operations before warm operation processes: a fresh one each, all at once. */
const FRESH_PROCESS_EACH = { KILN_PULUMI_OPERATIONS_PER_PROCESS: '1', KILN_PULUMI_CONCURRENCY: '256' };

/**
 * Creates DEPLOYMENTS at once in a new organization and follows them to running: POST -> running per
 * deployment, split by their workflows' histories, and the CPU each `up` cost (kiln_pulumi_operation_cpu_seconds,
 * which the operation processes measure from their own accounting and their children's).
 */
async function batch(label: string) {
  const tenant = await newOrganization(label);
  await postgresPlan(tenant.organizationId);
  resetCpu();
  const sent = new Map<string, number>();
  const runningAt = new Map<string, number>();
  const ids = await Promise.all(Array.from({ length: DEPLOYMENTS }, async (_, i) => {
    const at = Date.now();
    const res = await call('POST', '/api/deployments', tenant.token, { name: `${label}-${i}`, model: 'Qwen/Qwen2.5-0.5B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
    sent.set(res.body.data.id, at);
    return res.body.data.id as string;
  }));
  const providers = { maxRssKb: 0, maxRunning: 0 };
  for (const deadline = Date.now() + 15 * 60_000; runningAt.size < ids.length && Date.now() < deadline; await sleep(200)) {
    const rss = await providerRssKb();
    providers.maxRssKb = Math.max(providers.maxRssKb, ...rss);
    providers.maxRunning = Math.max(providers.maxRunning, rss.length);
    for (const id of ids.filter((i) => !runningAt.has(i))) {
      const { status, failureReason } = await statusOf(tenant.token, id);
      if (status === 'running') runningAt.set(id, Date.now());
      if (status === 'failed') throw new Error(`${id} failed: ${failureReason}`);
    }
  }
  if (runningAt.size < ids.length) throw new Error(`${ids.length - runningAt.size} deployments did not reach running in 15 minutes`);
  const totals: number[] = [];
  const parts = { temporal: [] as number[], pulumi: [] as number[], pods: [] as number[] };
  for (const id of ids) {
    const spans = await activitySpans(id);
    const apply = spans.get('applyStack')!;
    const ready = spans.get('waitUntilReady')!;
    totals.push(runningAt.get(id)! - sent.get(id)!);
    parts.temporal.push(apply.started - sent.get(id)!);
    parts.pulumi.push(apply.ended - apply.started);
    parts.pods.push(ready.ended - ready.started);
  }
  return { tenant, ids, totals, parts, providers, ...(await cpuPerUp()) };
}

function printBatch(title: string, result: Awaited<ReturnType<typeof batch>>) {
  const { totals, parts } = result;
  console.log(`\n1${title}. POST /api/deployments -> running, ${DEPLOYMENTS} deployments created at once, one worker`);
  console.log(`  total:     median ${seconds(median(totals))}, worst ${seconds(Math.max(...totals))}`);
  console.log(`  Temporal:  median ${seconds(median(parts.temporal))}, worst ${seconds(Math.max(...parts.temporal))}  (POST to the start of the first Pulumi step)`);
  console.log(`  Pulumi:    median ${seconds(median(parts.pulumi))}, worst ${seconds(Math.max(...parts.pulumi))}  (applyStack, waiting its turn included)`);
  console.log(`  pod start: median ${seconds(median(parts.pods))}, worst ${seconds(Math.max(...parts.pods))}  (waitUntilReady: scheduling, kwok's 300 ms, readiness polling)`);
  console.log(cpuLine(result));
}

try {
  if (ONLY !== 'growth') await steps1to5();
  // 6. POST -> running through a pool's growth, against the same deployment on nodes already there.
  const grown = await growth();
  console.log(`\n6. unschedulable -> running through a pool's growth, median of ${GROWTH_TRIALS}: a local cluster's pool of 1-GPU T4 nodes, one node short each time, one worker`);
  console.log(`  through the growth: median ${seconds(median(grown.growth.totals))}, worst ${seconds(Math.max(...grown.growth.totals))}  (POST -> running, ${grown.replicas.join(', ')} replicas)`);
  console.log(`    waiting out the grace: median ${seconds(median(grown.growth.grace))}  (POST to the growNodePool step: the pods unschedulable for KILN_UNSCHEDULABLE_GRACE_SECONDS=${GROWTH_GRACE_SECONDS})`);
  console.log(`    growth to running: median ${seconds(median(grown.growth.grown))}  (growNodePool to running: the cluster workflow's pulumi up adds the node, the pod starts)`);
  console.log(`  baseline, the nodes already there: median ${seconds(median(grown.baseline))}, worst ${seconds(Math.max(...grown.baseline))}  (the same deployment once the pool has grown)`);
  console.log(`  added by the growth: median ${seconds(median(grown.growth.totals) - median(grown.baseline))}`);
} finally {
  await stack.stop();
}

async function steps1to5() {
  // 1. POST -> running for a batch created at once: first as the worker ran Pulumi before its operation pool
  //    (a fresh process per operation, all at once), then as it runs now; the same machine, one run.
  await stack.restartWorker(FRESH_PROCESS_EACH);
  const before = await batch('fresh');
  await stack.restartWorker({});
  const now = await batch('pooled');
  printBatch('a', before);
  console.log('  (baseline: KILN_PULUMI_OPERATIONS_PER_PROCESS=1, KILN_PULUMI_CONCURRENCY=256, as before warm operation processes)');
  printBatch('b', now);
  console.log(`  ratio, pooled / fresh: total median ${(median(now.totals) / median(before.totals)).toFixed(2)}, CPU per up with loading ${(withLoading(now) / withLoading(before)).toFixed(2)}`);
  const { tenant, ids, providers } = now;

  // 2. One `pulumi up` taken apart, on an idle worker.
  const split = await pulumiSplit(tenant.organizationId);
  console.log(`\n2. one \`pulumi up\` of a deployment stack, median of ${PULUMI_SAMPLES}`);
  console.log(`  CLI start to the engine's first event: ${split.cli} ms`);
  console.log(`  Kubernetes plugin start (process start to port printed, measured on its own; paid inside the engine part): ${split.plugin} ms`);
  console.log(`  engine (prelude to summary: program, plugin, diff, apply): ${split.engine} ms`);
  console.log(`  state write and after (summary to the answer: the CLI's exit; the outputs come from the up's events): ${split.state} ms`);
  console.log(`  total: ${split.total} ms`);
  console.log(`  Kubernetes provider plugin RSS: ${mb(split.pluginRssKb)} at start; during step 1 at most ${mb(providers.maxRssKb)} for one plugin process, ${providers.maxRunning} running at once at most`);
  const fixed = split.cli + split.plugin + split.state; // the plugin's start is a part of the engine's time
  console.log(`  ${Math.round((100 * fixed) / split.total)}% of each up is process start-up (CLI, plugin) and what follows the summary, paid per operation;`);
  console.log('    under load the CPU is the limit: each up is a CLI and a plugin process on 2 cores, beside the warm operation process.');

  // 3. Streamed inference through Kiln and straight to the pod, interleaved so both see the same machine.
  const target = ids[0]!;
  const podIp = await readyPodIp(tenant.organizationId, 'pooled-0');
  const viaKiln = { ttft: [] as number[], rate: [] as number[] };
  const direct = { ttft: [] as number[], rate: [] as number[] };
  for (let i = 0; i < INFERENCE_REQUESTS; i++) {
    const messages = [{ role: 'user', content: `Request ${i}: summarise the history of the printing press.` }];
    const kiln = await streamedCompletion(`${stack.apiUrl}/v1/inference`, { deployment: target, messages, max_tokens: MAX_TOKENS, stream: true }, tenant.token);
    const straight = await streamedCompletion(`http://${podIp}:8000/v1/chat/completions`, { model: 'Qwen/Qwen2.5-0.5B-Instruct', messages, max_tokens: MAX_TOKENS, stream: true });
    viaKiln.ttft.push(kiln.ttft); viaKiln.rate.push(kiln.tokensPerSecond);
    direct.ttft.push(straight.ttft); direct.rate.push(straight.tokensPerSecond);
  }
  const added = (p: number) => (percentile(viaKiln.ttft, p) - percentile(direct.ttft, p)).toFixed(2);
  console.log(`\n3. streamed chat completions, ${INFERENCE_REQUESTS} each way, ${MAX_TOKENS} tokens, one at a time`);
  console.log(`  time to first token, direct: p50 ${percentile(direct.ttft, 50).toFixed(2)} ms, p99 ${percentile(direct.ttft, 99).toFixed(2)} ms`);
  console.log(`  time to first token, through Kiln: p50 ${percentile(viaKiln.ttft, 50).toFixed(2)} ms, p99 ${percentile(viaKiln.ttft, 99).toFixed(2)} ms`);
  console.log(`  added by Kiln: p50 ${added(50)} ms, p99 ${added(99)} ms (aim: under 5 ms at p50)`);
  const ratio = median(viaKiln.rate) / median(direct.rate);
  console.log(`  streamed tokens/s, median: direct ${median(direct.rate).toFixed(1)}, through Kiln ${median(viaKiln.rate).toFixed(1)} (${(100 * ratio).toFixed(1)}% kept; aim: at least 90%)`);

  // 4. A burst of BURST creations, while another organization reads its deployments.
  const idleReads = await timedReads(now.tenant.token, 50);
  const burstResult = await burst(now.tenant.token);
  console.log(`\n4. ${BURST} deployments created at once, one worker`);
  console.log(`  POST -> running: median ${seconds(median(burstResult.totals))}, worst ${seconds(Math.max(...burstResult.totals))} (aim: all within 60 s)`);
  console.log(`  POST answered: median ${median(burstResult.posts).toFixed(0)} ms, worst ${Math.max(...burstResult.posts).toFixed(0)} ms`);
  console.log(`  GET /api/deployments of another organization: idle p50 ${percentile(idleReads, 50).toFixed(1)} ms, p99 ${percentile(idleReads, 99).toFixed(1)} ms;`
    + ` during the burst (${burstResult.reads.length} reads) p50 ${percentile(burstResult.reads, 50).toFixed(1)} ms, p99 ${percentile(burstResult.reads, 99).toFixed(1)} ms (aim: p99 under 200 ms)`);
  console.log(cpuLine(burstResult));

  // 5. Sustained churn against the same worker.
  const churned = await churn();
  const minutes = CHURN_SECONDS / 60;
  console.log(`\n5. churn: creates, scales and deletes mixed, ${CHURN_PER_MINUTE} a minute asked for ${CHURN_SECONDS} s, one worker`);
  for (const kind of ['create', 'scale', 'delete'] as const) {
    const settled = churned.settled[kind];
    const times = settled.length ? `, median ${seconds(median(settled))}, p95 ${seconds(percentile(settled, 95))}` : '';
    console.log(`  ${kind}: ${churned.issued[kind]} sent, ${settled.length} settled${times}`);
  }
  const settledCount = churned.settled.create.length + churned.settled.scale.length + churned.settled.delete.length;
  console.log(`  settled: ${(settledCount / minutes).toFixed(0)} a minute (aim: at least 120), ${churned.unsettled} still settling at the end;`
    + ` ${churned.skipped} turns skipped (every live deployment still settling); failures: ${churned.failures.length}${churned.failures.length ? ` (${churned.failures.slice(0, 3).join('; ')})` : ''}`);
  console.log(cpuLine(churned));
}

/**
 * Step 6: a `local` cluster registered with a pool of one-GPU T4 nodes (1 node, at most 1 + GROWTH_TRIALS); the
 * worker restarted with a grace of GROWTH_GRACE_SECONDS. Each trial creates a deployment of one replica more than
 * the pool has nodes (so the last replica waits for a node the rollout grows the pool by), times POST -> running and
 * deletes it; then the baseline creates the same deployment on the nodes now there. Growth and baseline alternate, so
 * both see the same machine.
 */
async function growth() {
  await stack.restartWorker({ KILN_UNSCHEDULABLE_GRACE_SECONDS: String(GROWTH_GRACE_SECONDS) });
  const kubeconfig = await readFile(cluster.kubeconfig, 'utf8');
  const pool = { name: 't4', gpuType: 'nvidia-t4', minSize: 1, desiredSize: 1, maxSize: 1 + GROWTH_TRIALS, gpusPerNode: 1 };
  const registered = await call('POST', '/v1/admin/clusters', stack.admin, { provider: 'local', name: 'pools', kubeconfig, nodePools: [pool] });
  if (registered.status !== 201) throw new Error(`local cluster registration failed: ${registered.status} ${JSON.stringify(registered.body)}`);
  const clusterId = registered.body.id as string;
  for (const deadline = Date.now() + 5 * 60_000; ; await sleep(500)) {
    const { status, failureReason } = (await call('GET', `/v1/admin/clusters/${clusterId}`, stack.admin)).body;
    if (status === 'ready') break;
    if (status === 'failed' || Date.now() > deadline) throw new Error(`the local cluster is ${status}: ${failureReason}`);
  }
  const tenant = await newOrganization('growth');
  await postgresPlan(tenant.organizationId);
  /** POST -> running of `replicas` T4 replicas, and when its growNodePool step started and ended (if it grew a pool); deleted after. */
  const trial = async (name: string, replicas: number) => {
    const sent = Date.now();
    const res = await call('POST', '/api/deployments', tenant.token, { name, model: 'Qwen/Qwen2.5-0.5B-Instruct', runtime: 'vllm', gpu: 'nvidia-t4', replicas });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
    const id = res.body.data.id as string;
    let runningAt = 0;
    for (const deadline = Date.now() + 10 * 60_000; !runningAt; await sleep(200)) {
      const { status, failureReason } = await statusOf(tenant.token, id);
      if (status === 'running') runningAt = Date.now();
      else if (status === 'failed' || Date.now() > deadline) throw new Error(`${name} is ${status}: ${failureReason}`);
    }
    const grew = (await activitySpans(id)).get('growNodePool');
    const deleted = await call('DELETE', `/api/deployments/${id}`, tenant.token);
    if (deleted.status !== 200) throw new Error(`delete answered ${deleted.status}`);
    const pods = `/api/v1/namespaces/${namespaceOf(tenant.organizationId)}/pods`;
    for (const deadline = Date.now() + 5 * 60_000; (await cluster.api.get<{ items: unknown[] }>(pods)).items.length > 0; await sleep(200)) {
      if (Date.now() > deadline) throw new Error(`${name}'s pods are still there 5 minutes after its deletion`);
    }
    return { total: runningAt - sent, grace: grew ? grew.started - sent : undefined, grown: grew ? runningAt - grew.ended : undefined };
  };
  const result = { replicas: [] as number[], growth: { totals: [] as number[], grace: [] as number[], grown: [] as number[] }, baseline: [] as number[] };
  for (let i = 0; i < GROWTH_TRIALS; i++) {
    const replicas = pool.desiredSize + i + 1;
    const grown = await trial(`grow-${i}`, replicas);
    if (grown.grace === undefined || grown.grown === undefined) throw new Error(`grow-${i} ran without growing the pool`);
    result.replicas.push(replicas);
    result.growth.totals.push(grown.total);
    result.growth.grace.push(grown.grace);
    result.growth.grown.push(grown.grown);
    const base = await trial(`base-${i}`, replicas);
    if (base.grace !== undefined) throw new Error(`base-${i} grew the pool: the nodes were not all there`);
    result.baseline.push(base.total);
  }
  return result;
}

function resetCpu(): void {
  workerMetrics().pulumiCpu.reset();
  workerMetrics().pulumiLoadCpu.reset();
}

/**
 * CPU-seconds per `up` since resetCpu (kiln_pulumi_operation_cpu_seconds), and what loading operation processes
 * cost meanwhile, apart (kiln_pulumi_process_load_cpu_seconds_total: fresh processes' start and SDKs).
 */
async function cpuPerUp(): Promise<{ cpuPerUp: number; ups: number; loadCpu: number }> {
  const cpu = (await workerMetrics().pulumiCpu.get()).values.filter((v) => v.labels.operation === 'up');
  const sum = cpu.find((v) => v.metricName?.endsWith('_sum'))?.value ?? 0;
  const count = cpu.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
  const loadCpu = (await workerMetrics().pulumiLoadCpu.get()).values[0]?.value ?? 0;
  return { cpuPerUp: count ? sum / count : 0, ups: count, loadCpu };
}

type UpCpu = Awaited<ReturnType<typeof cpuPerUp>>;
/** CPU per `up` with the loading of the operation processes shared among the ups. */
function withLoading({ cpuPerUp, ups, loadCpu }: UpCpu): number {
  return ups ? cpuPerUp + loadCpu / ups : 0;
}
/** The CPU line of a step: per `up`, then with loading shared among them. */
function cpuLine(cpu: UpCpu): string {
  return `  CPU per \`pulumi up\`: ${cpu.cpuPerUp.toFixed(2)} CPU-seconds (mean of ${cpu.ups}: operation process, Pulumi CLI and plugin, user + system);`
    + ` ${withLoading(cpu).toFixed(2)} with loading the operation processes (${cpu.loadCpu.toFixed(1)} CPU-seconds) shared among them`;
}

/** `count` reads of GET /api/deployments, one every 100 ms: each one's milliseconds. */
async function timedReads(token: string, count: number, until: () => boolean = () => false): Promise<number[]> {
  const took: number[] = [];
  for (let i = 0; i < count || until(); i++) {
    const started = performance.now();
    const res = await call('GET', '/api/deployments?limit=20', token);
    if (res.status !== 200) throw new Error(`GET /api/deployments answered ${res.status}`);
    took.push(performance.now() - started);
    if (count > 0 && i + 1 >= count) break;
    await sleep(100);
  }
  return took;
}

/** The organization's live deployments, by id (one page: the bench keeps at most 100 in one). */
async function listed(token: string): Promise<Map<string, { status: string; replicas: number; currentReplicas: number; failureReason: string | null }>> {
  const res = await call('GET', '/api/deployments?limit=100', token);
  if (res.status !== 200) throw new Error(`GET /api/deployments answered ${res.status}`);
  return new Map((res.body.data as { id: string; status: string; replicas: number; currentReplicas: number; failureReason: string | null }[]).map((d) => [d.id, d]));
}

/** BURST deployments POSTed at once in a new organization, followed to running by their list; `readerToken`'s organization reads meanwhile. */
async function burst(readerToken: string) {
  const tenant = await newOrganization('burst');
  await postgresPlan(tenant.organizationId);
  resetCpu();
  let done = false;
  const reads = timedReads(readerToken, 0, () => !done);
  const sent = new Map<string, number>();
  const posts: number[] = [];
  const runningAt = new Map<string, number>();
  try {
    await Promise.all(Array.from({ length: BURST }, async (_, i) => {
      const at = Date.now();
      const res = await call('POST', '/api/deployments', tenant.token, { name: `burst-${i}`, model: 'Qwen/Qwen2.5-0.5B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' });
      if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
      posts.push(Date.now() - at);
      sent.set(res.body.data.id, at);
    }));
    for (const deadline = Date.now() + 15 * 60_000; runningAt.size < BURST && Date.now() < deadline; await sleep(500)) {
      for (const [id, d] of await listed(tenant.token)) {
        if (d.status === 'running' && !runningAt.has(id)) runningAt.set(id, Date.now());
        if (d.status === 'failed') throw new Error(`${id} failed: ${d.failureReason}`);
      }
    }
  } finally {
    // The reader stops with the burst, whichever way it ends (a failure is the burst's to report).
    done = true;
    await reads.catch(() => undefined);
  }
  if (runningAt.size < BURST) throw new Error(`${BURST - runningAt.size} deployments did not reach running in 15 minutes`);
  return { totals: [...runningAt].map(([id, at]) => at - sent.get(id)!), posts, reads: await reads, ...(await cpuPerUp()) };
}

type ChurnKind = 'create' | 'scale' | 'delete';

/**
 * For CHURN_SECONDS, one lifecycle request every 60/CHURN_PER_MINUTE seconds in a new organization: a creation
 * while fewer than half of CHURN_LIVE live, else a scale (1 <-> 2 replicas) or a delete of a settled deployment,
 * or a creation while there is room. Each is settled once the list shows it running at the asked replicas, or
 * gone; a failed deployment or a refused request is a failure.
 */
async function churn() {
  const tenant = await newOrganization('churn');
  await postgresPlan(tenant.organizationId);
  resetCpu();
  const issued = { create: 0, scale: 0, delete: 0 };
  const settled: Record<ChurnKind, number[]> = { create: [], scale: [], delete: [] };
  const failures: string[] = [];
  /** Each live deployment's replicas asked for, and the request it has not settled yet. */
  const live = new Map<string, { replicas: number; pending?: { kind: ChurnKind; at: number } }>();
  /** Creations sent and not answered yet: they count against CHURN_LIVE (the GPUs were sized for it). */
  let creating = 0;
  let sequence = 0;
  const request = async (kind: ChurnKind, id?: string) => {
    issued[kind]++;
    const at = Date.now();
    if (kind === 'create') {
      creating++;
      const res = await call('POST', '/api/deployments', tenant.token, { name: `churn-${sequence++}`, model: 'Qwen/Qwen2.5-0.5B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas: 1, minReplicas: 1, maxReplicas: 1 })
        .finally(() => { creating--; });
      if (res.status !== 201) return void failures.push(`create answered ${res.status}`);
      live.set(res.body.data.id, { replicas: 1, pending: { kind, at } });
    } else if (kind === 'scale') {
      // Pinned (min = max): the autoscaler leaves the count asked for alone. The target is set before the
      // request, so a list read meanwhile cannot count the old count as settled.
      const entry = live.get(id!)!;
      const replicas = entry.replicas === 1 ? 2 : 1;
      Object.assign(entry, { replicas, pending: { kind, at } });
      const res = await call('PATCH', `/api/deployments/${id}`, tenant.token, { replicas, minReplicas: replicas, maxReplicas: replicas });
      if (res.status !== 200) {
        Object.assign(entry, { replicas: replicas === 1 ? 2 : 1, pending: undefined });
        return void failures.push(`scale answered ${res.status}`);
      }
    } else {
      const entry = live.get(id!)!;
      entry.pending = { kind, at };
      const res = await call('DELETE', `/api/deployments/${id}`, tenant.token);
      if (res.status >= 300) {
        entry.pending = undefined;
        return void failures.push(`delete answered ${res.status}`);
      }
    }
  };
  const next = (): Promise<void> | undefined => {
    const idle = [...live].filter(([, e]) => !e.pending).map(([id]) => id);
    const count = live.size + creating;
    if (count < CHURN_LIVE / 2 || (idle.length === 0 && count < CHURN_LIVE)) return request('create');
    if (idle.length === 0) return undefined;
    const pick = idle[Math.floor(Math.random() * idle.length)]!;
    const roll = Math.random();
    if (roll < 0.25 && count < CHURN_LIVE) return request('create');
    return request(roll < 0.7 ? 'scale' : 'delete', pick);
  };
  const requests: Promise<void>[] = [];
  const end = Date.now() + CHURN_SECONDS * 1000;
  let nextAt = Date.now();
  let skipped = 0;
  while (Date.now() < end) {
    if (Date.now() >= nextAt) {
      // A request that throws (the API unreachable) is a failure of the churn, counted, not an unhandled rejection.
      const sentOne = next()?.catch((error: unknown) => void failures.push(`request failed: ${(error as Error).message}`));
      if (sentOne) requests.push(sentOne); else skipped++;
      nextAt += 60_000 / CHURN_PER_MINUTE;
    }
    const shown = await listed(tenant.token);
    for (const [id, entry] of live) {
      const d = shown.get(id);
      // A failed deployment counts whether or not a request of the churn's waits on it, and leaves the pool.
      if (d?.status === 'failed') { failures.push(`${id} failed: ${d.failureReason}`); live.delete(id); continue; }
      if (!entry.pending) continue;
      const done = entry.pending.kind === 'delete' ? d === undefined : d?.status === 'running' && d.replicas === entry.replicas && d.currentReplicas === entry.replicas;
      if (!done) continue;
      settled[entry.pending.kind].push(Date.now() - entry.pending.at);
      if (entry.pending.kind === 'delete') live.delete(id); else entry.pending = undefined;
    }
    await sleep(Math.max(0, Math.min(250, nextAt - Date.now())));
  }
  await Promise.all(requests);
  const unsettled = [...live.values()].filter((e) => e.pending).length;
  return { issued, settled, failures, unsettled, skipped, ...(await cpuPerUp()) };
}

/** The address of a deployment's Ready pod, where the simulated model server answers. */
async function readyPodIp(organizationId: string, name: string): Promise<string> {
  const selector = encodeURIComponent(`app.kubernetes.io/instance=${name}`);
  const pods = await cluster.api.get<{ items: { status: { podIP?: string; conditions?: { type: string; status: string }[] } }[] }>(
    `/api/v1/namespaces/${namespaceOf(organizationId)}/pods?labelSelector=${selector}`);
  const ready = pods.items.find((p) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  if (!ready?.status.podIP) throw new Error(`${name} has no Ready pod`);
  return ready.status.podIP;
}

/** Growth plan, so the bench's own polling stays under the rate limit. */
async function postgresPlan(organizationId: string): Promise<void> {
  const { default: pg } = await import('pg');
  const db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
  await db.query('UPDATE organization SET plan = $1 WHERE id = $2', ['growth', organizationId]);
  await db.end();
}

/** Times the parts of `pulumi up` of one deployment's stack, run here through the Automation API. */
async function pulumiSplit(organizationId: string) {
  const kubeconfig = await readFile(cluster.kubeconfig, 'utf8');
  await ensureNamespace(cluster.api, namespaceOf(organizationId));
  const settings = {
    backendUrl: `file://${join(dataDir, 'bench-pulumi-state')}`, passphrase: 'bench', workspacesDir: join(dataDir, 'bench-pulumi-workspaces'),
    cliRoot: toolDir('pulumi'), home: pulumiHome,
  };
  const samples = { cli: [] as number[], plugin: [] as number[], pluginRssKb: [] as number[], engine: [] as number[], state: [] as number[], total: [] as number[] };
  for (let i = 0; i < PULUMI_SAMPLES; i++) {
    const target = {
      deploymentId: `dep_benchsplit${i}`, organizationId, name: `split-${i}`,
      desired: { generation: 1, model: 'Qwen/Qwen2.5-0.5B-Instruct', gpu: 'nvidia-l4', replicas: 1, minReplicas: 1, maxReplicas: 1, running: true, restarts: 0, refreshes: 0, deleted: false, forceDelete: false },
    };
    const stack = await openStack(settings, { project: 'kiln-bench', stackName: target.deploymentId, program: deploymentProgram({ target, cluster: { kubeconfig } }) });
    let prelude = 0;
    let summary = 0;
    const onEvent = (event: EngineEvent) => {
      if (event.preludeEvent) prelude = performance.now();
      if (event.summaryEvent) summary = performance.now();
    };
    const started = performance.now();
    // A first rollout, as Kiln's worker runs it (workflows/pulumi/automation.ts): refresh first (of nothing, on a
    // new stack), the outputs read from the up's own events.
    await upReadingEvents(stack, { onEvent, refresh: true });
    const ended = performance.now();
    samples.cli.push(prelude - started);
    samples.engine.push(summary - prelude);
    samples.state.push(ended - summary);
    samples.total.push(ended - started);
    const plugin = await pluginStart();
    samples.plugin.push(plugin.ms);
    samples.pluginRssKb.push(plugin.rssKb);
  }
  const m = (values: number[]) => Math.round(median(values));
  return { cli: m(samples.cli), plugin: m(samples.plugin), pluginRssKb: m(samples.pluginRssKb), engine: m(samples.engine), state: m(samples.state), total: m(samples.total) };
}

/** Starts the installed Kubernetes plugin as the engine does and times it until it prints its port; answers that time and its RSS then. */
async function pluginStart(): Promise<{ ms: number; rssKb: number }> {
  const path = pluginBinary(PULUMI_PLUGINS.find((p) => p.name === 'kubernetes')!);
  const started = performance.now();
  const child = spawn(path, ['127.0.0.1:1'], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((done, fail) => {
    child.stdout.once('data', () => done());
    child.once('exit', (code) => fail(new Error(`the plugin exited (${code}) before printing its port`)));
  });
  const elapsed = performance.now() - started;
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
  child.kill();
  return { ms: elapsed, rssKb: Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) };
}
