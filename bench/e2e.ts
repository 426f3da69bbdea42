// `npm run bench:e2e`: the main job end to end on the local cluster, in DATA_DIR/bench-e2e (emptied first):
//  1. 20 deployments created at once, POST -> running: median and worst, split into Temporal (POST to the
//     first Pulumi step), Pulumi (the applyStack activity) and pod start (waitUntilReady), from each
//     workflow's history, and the CPU-seconds per `pulumi up`; twice in the same run: with a fresh operation
//     process per operation, all at once (the baseline, as before the operation pool), then pooled;
//  2. where one `pulumi up` spends its time: CLI start, Kubernetes plugin start, engine, state write; and the
//     Kubernetes provider plugin's memory (its largest RSS, sampled during step 1, and at start);
//  3. inference through Kiln against the same requests sent straight to the simulated model server, in one
//     run: the latency Kiln adds to the first token (p50, p99) and the streamed tokens/s it keeps.
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

const stack = await startBenchStack('bench-e2e', [{ gpuType: 'nvidia-l4', nodes: 2 * DEPLOYMENTS + PULUMI_SAMPLES + 2, gpusPerNode: 1 }]);
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
  workerMetrics().pulumiCpu.reset();
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
  const cpu = (await workerMetrics().pulumiCpu.get()).values.filter((v) => v.labels.operation === 'up');
  const sum = cpu.find((v) => v.metricName?.endsWith('_sum'))?.value ?? 0;
  const count = cpu.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
  return { tenant, ids, totals, parts, providers, cpuPerUp: count ? sum / count : 0, ups: count };
}

function printBatch(title: string, result: Awaited<ReturnType<typeof batch>>) {
  const { totals, parts } = result;
  console.log(`\n1${title}. POST /api/deployments -> running, ${DEPLOYMENTS} deployments created at once, one worker`);
  console.log(`  total:     median ${seconds(median(totals))}, worst ${seconds(Math.max(...totals))}`);
  console.log(`  Temporal:  median ${seconds(median(parts.temporal))}, worst ${seconds(Math.max(...parts.temporal))}  (POST to the start of the first Pulumi step)`);
  console.log(`  Pulumi:    median ${seconds(median(parts.pulumi))}, worst ${seconds(Math.max(...parts.pulumi))}  (applyStack, waiting its turn included)`);
  console.log(`  pod start: median ${seconds(median(parts.pods))}, worst ${seconds(Math.max(...parts.pods))}  (waitUntilReady: scheduling, kwok's 300 ms, readiness polling)`);
  console.log(`  CPU per \`pulumi up\`: ${result.cpuPerUp.toFixed(2)} CPU-seconds (mean of ${result.ups}: operation process, Pulumi CLI and plugin, user + system)`);
}

try {
  // 1. POST -> running for a batch created at once: first as the worker ran Pulumi before its operation pool
  //    (a fresh process per operation, all at once), then as it runs now; the same machine, one run.
  await stack.restartWorker(FRESH_PROCESS_EACH);
  const before = await batch('fresh');
  await stack.restartWorker({});
  const now = await batch('pooled');
  printBatch('a', before);
  console.log('  (baseline: KILN_PULUMI_OPERATIONS_PER_PROCESS=1, KILN_PULUMI_CONCURRENCY=256, as before warm operation processes)');
  printBatch('b', now);
  console.log(`  ratio, pooled / fresh: total median ${(median(now.totals) / median(before.totals)).toFixed(2)}, CPU per up ${(now.cpuPerUp / before.cpuPerUp).toFixed(2)}`);
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
} finally {
  await stack.stop();
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
