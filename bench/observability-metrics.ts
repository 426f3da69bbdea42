// The metric route over 24 hours (part of `npm run bench:observability`): GET /v1/deployments/{id}/metrics
// for one deployment of an organization with BENCH_METRICS_DEPLOYMENTS deployments, against a real Prometheus
// holding 24 hours of their vLLM series, backfilled with Prometheus's own promtool (tsdb create-blocks-from
// openmetrics): the measured deployment at a 5 s scrape's resolution, the others at 60 s (the route reads only
// its deployment's series; the others make the index and the store the size 200 deployments make them). The
// baseline, in the same run: the same PromQL sent straight to Prometheus, as the route sends it (all at once),
// so the difference is what Kiln adds (authentication, the database read, shaping the answer).
// Run: node bench/observability-metrics.ts
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { binaryPath } from '../infra/tools/paths.ts';
import { startPrometheus } from '../infra/servers/prometheus.ts';
import { freePort } from '../infra/servers/process.ts';
import { createPrometheusClient } from '../lib/prometheus/client.ts';
import { LATENCIES, METRICS, metricQueries, QUANTILES, rateWindowSeconds } from '../lib/prometheus/deployment-metrics.ts';
import { namespaceOf } from '../workflows/contract/deployment.ts';
import { startBenchApi } from './support/bench-api.ts';

const DEPLOYMENTS = Number(process.env.BENCH_METRICS_DEPLOYMENTS ?? 200);
const REQUESTS = Number(process.env.BENCH_METRICS_REQUESTS ?? 100);
const HOURS = 24;
const MEASURED_RESOLUTION_S = 5;
const OTHERS_RESOLUTION_S = 60;

const dataDir = resolve(process.env.DATA_DIR ?? '.data', 'bench-observability');
await rm(dataDir, { recursive: true, force: true });
await mkdir(dataDir, { recursive: true });
const prometheusPort = await freePort();
const api = await startBenchApi('observability', { PROMETHEUS_URL: `http://127.0.0.1:${prometheusPort}` });

async function call(method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(api.url + path, {
    method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const session = (await call('POST', '/v1/auth/signup', undefined, { email: 'observability@bench.example', password: 'bench-password', name: 'Bench', organizationName: 'Bench' })).body;
const organizationId: string = session.user.organization_id;
const apiKey: string = (await call('POST', '/v1/settings/api-keys', session.access_token, { name: 'bench', scope: 'read_only' })).body.key;
const namespace = namespaceOf(organizationId);
await api.pool.query(`
  INSERT INTO deployment (id, created_at, updated_at, organization_id, name, model, runtime, gpu, status, endpoint, replicas, min_replicas, max_replicas, current_replicas)
  SELECT 'dep_bench' || i, now(), now(), $1, 'chat-' || i, 'meta-llama/Llama-3.1-8B-Instruct', 'vllm', 'nvidia-l4', 'running', 'https://bench.example', 1, 1, 1, 1
  FROM generate_series(1, $2::int) AS i`, [organizationId, DEPLOYMENTS]);
const measured = { id: 'dep_bench1', name: 'chat-1' };

// ---- 24 hours of vLLM series, written as OpenMetrics for promtool ----
const end = Math.floor(Date.now() / 1000) - 60;
const start = end - HOURS * 3600;
const BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Requests per second of deployment i at time t: a daily swell, different per deployment. */
const rate = (i: number, t: number) => 1 + (i % 7) + 2 * Math.sin((t / 86_400) * 2 * Math.PI + i);

console.log(`writing ${HOURS} h of vLLM series for ${DEPLOYMENTS} deployments (deployment 1 every ${MEASURED_RESOLUTION_S} s, the others every ${OTHERS_RESOLUTION_S} s)...`);
const input = join(dataDir, 'history.om.txt');
const out = createWriteStream(input);
const write = async (line: string) => { if (!out.write(line)) await once(out, 'drain'); };
const deployments = Array.from({ length: DEPLOYMENTS }, (_, i) => i + 1);
const labels = (i: number, extra = '') => `{job="vllm-0",namespace="${namespace}",deployment="chat-${i}",pod="chat-${i}-0",instance="10.0.${i >> 8}.${i & 255}:8000"${extra}}`;
/** One series: its value at each sample time of its deployment's resolution. */
async function series(name: string, i: number, extra: string, value: (t: number, requests: number) => number) {
  const step = i === 1 ? MEASURED_RESOLUTION_S : OTHERS_RESOLUTION_S;
  let requests = 0;
  for (let t = start; t <= end; t += step) {
    requests += rate(i, t) * step;
    await write(`${name}${labels(i, extra)} ${value(t, requests)} ${t}\n`);
  }
}
type Family = [name: string, type: string, each: (i: number) => Promise<void>];
const families: Family[] = [
  ['vllm:request_success', 'counter', async (i) => {
    await series('vllm:request_success_total', i, ',finished_reason="stop"', (_, n) => Math.floor(n * 0.98));
    await series('vllm:request_success_total', i, ',finished_reason="abort"', (_, n) => Math.floor(n * 0.02));
  }],
  ['vllm:prompt_tokens', 'counter', (i) => series('vllm:prompt_tokens_total', i, '', (_, n) => Math.floor(n * 220))],
  ['vllm:generation_tokens', 'counter', (i) => series('vllm:generation_tokens_total', i, '', (_, n) => Math.floor(n * 180))],
  ...[['vllm:time_to_first_token_seconds', 0.08], ['vllm:e2e_request_latency_seconds', 1.9]].map(([name, mean]) => [name, 'histogram', async (i: number) => {
    for (const le of [...BUCKETS, Infinity]) {
      const share = Math.min(1, le / (2 * (mean as number)));
      await series(`${name}_bucket`, i, `,le="${le === Infinity ? '+Inf' : le}"`, (_, n) => Math.floor(n * share));
    }
    await series(`${name}_count`, i, '', (_, n) => Math.floor(n));
    await series(`${name}_sum`, i, '', (_, n) => Math.floor(n) * (mean as number));
  }] as Family),
  ['vllm:num_requests_running', 'gauge', (i) => series('vllm:num_requests_running', i, '', (t) => Math.round(rate(i, t) * 1.9))],
  ['vllm:num_requests_waiting', 'gauge', (i) => series('vllm:num_requests_waiting', i, '', (t) => Math.max(0, Math.round(rate(i, t) - 5)))],
  ['vllm:kv_cache_usage_perc', 'gauge', (i) => series('vllm:kv_cache_usage_perc', i, '', (t) => Math.min(1, rate(i, t) / 12))],
  ['up', 'gauge', (i) => series('up', i, '', () => 1)],
];
const writing = performance.now();
for (const [name, type, each] of families) {
  await write(`# TYPE ${name} ${type}\n`);
  for (const i of deployments) await each(i);
}
await write('# EOF\n');
out.end();
await once(out, 'finish');
const writtenS = (performance.now() - writing) / 1000;

console.log('backfilling with promtool...');
const tsdb = join(dataDir, 'prometheus', 'tsdb');
await mkdir(tsdb, { recursive: true });
const backfilling = performance.now();
await new Promise<void>((done, fail) => {
  const child = spawn(binaryPath('prometheus', 'promtool'), ['tsdb', 'create-blocks-from', 'openmetrics', '--quiet', input, tsdb], { stdio: ['ignore', 'ignore', 'inherit'] });
  child.on('exit', (code) => (code === 0 ? done() : fail(new Error(`promtool exited ${code}`))));
});
const backfillS = (performance.now() - backfilling) / 1000;
await rm(input);
const prometheus = await startPrometheus({ dataDir: join(dataDir, 'prometheus'), port: prometheusPort, kubeconfigs: [] });

// ---- Measured: the route, and the same queries straight to Prometheus ----
const from = new Date((start + 120) * 1000).toISOString();
const to = new Date(end * 1000).toISOString();
const path = `/v1/deployments/${measured.id}/metrics?orgId=${organizationId}&from=${from}&to=${to}`;
const first = await call('GET', path, apiKey);
if (first.status !== 200) throw new Error(`the route answered ${first.status}: ${JSON.stringify(first.body)}`);
const points = first.body.series.requestsPerSecond as Array<{ value: number | null }>;
const filled = points.filter((p) => p.value !== null).length;
const stepSeconds = first.body.stepSeconds as number;

const direct = createPrometheusClient(prometheus.url);
const queries = metricQueries({ namespace, deployment: measured.name }, rateWindowSeconds(stepSeconds));
const promql = [...METRICS.map((m) => queries[m]), ...LATENCIES.flatMap((l) => Object.keys(QUANTILES).map((q) => queries[l][q as keyof typeof QUANTILES]))];
const range = { start: new Date(Math.floor((start + 120) / stepSeconds) * stepSeconds * 1000), end: new Date(Math.floor(end / stepSeconds) * stepSeconds * 1000), stepSeconds };

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.max(0, Math.ceil((p / 100) * values.length) - 1))]!;
async function timed(run: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const began = performance.now();
    await run();
    times.push(performance.now() - began);
  }
  return times;
}
// Turns: baseline, route, baseline, route, so a busy moment of the machine falls on both.
const baseline: number[] = [];
const route: number[] = [];
for (let turn = 0; turn < 2; turn++) {
  baseline.push(...await timed(() => Promise.all(promql.map((q) => direct.queryRange(q, range)))));
  route.push(...await timed(async () => {
    const res = await fetch(api.url + path, { headers: { authorization: `Bearer ${apiKey}` } });
    if (res.status !== 200) throw new Error(`the route answered ${res.status}`);
    await res.arrayBuffer();
  }));
}
const row = (title: string, times: number[]) => ({ title, requests: times.length, 'p50 ms': Number(percentile(times, 50).toFixed(1)), 'p99 ms': Number(percentile(times, 99).toFixed(1)) });
console.log(`history: ${writtenS.toFixed(0)} s to write, ${backfillS.toFixed(0)} s for promtool; the route's answer: ${points.length} points a series every ${stepSeconds} s, ${filled} with a value`);
console.table([
  row(`baseline: the route's ${promql.length} PromQL range queries straight to Prometheus (at once)`, baseline),
  row(`GET /v1/deployments/{id}/metrics, ${HOURS} h (read-only API key), ${DEPLOYMENTS} deployments in the store`, route),
]);
const difference = (p: number) => { const ms = percentile(route, p) - percentile(baseline, p); return `${ms >= 0 ? '+' : ''}${ms.toFixed(1)} ms`; };
console.log(`the route over the baseline: p50 ${difference(50)}, p99 ${difference(99)}`);

await prometheus.stop();
await api.close();
