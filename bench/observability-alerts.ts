// Alert evaluation time for 10,000 rules (part of `npm run bench:observability`): a real Prometheus (Kiln's
// tools cache) scrapes, every second, the vLLM metrics of BENCH_ALERT_DEPLOYMENTS simulated deployments in
// BENCH_ALERT_ORGANIZATIONS organizations (one scrape target per deployment, labelled with its namespace and
// name as pod discovery labels a model server's series); once it holds a rate window of samples, the same
// evaluation the workflow's activity runs each pass (workflows/alerts/activities.ts evaluateRules: the rules'
// values from Prometheus, one query per organization and figure, then each rule's step) is timed for one
// rule (the baseline) and for BENCH_ALERT_RULES rules of every kind, BENCH_ALERT_RUNS times each.
// Run: node bench/observability-alerts.ts
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { binaryPath } from '../infra/tools/paths.ts';
import { freePort, startProcess, waitUntilReady } from '../infra/servers/process.ts';
import type { DeploymentFacts } from '../lib/alerts/measure.ts';
import { ALERT_METRICS, type AlertMetric } from '../lib/alerts/rules.ts';
import { createPrometheusClient } from '../lib/prometheus/client.ts';
import { rateWindowSeconds } from '../lib/prometheus/deployment-metrics.ts';
import { evaluateRules } from '../workflows/alerts/activities.ts';
import type { LoadedRule } from '../workflows/alerts/store.ts';
import { namespaceOf } from '../workflows/contract/deployment.ts';

const ORGANIZATIONS = Number(process.env.BENCH_ALERT_ORGANIZATIONS ?? 100);
const DEPLOYMENTS = Number(process.env.BENCH_ALERT_DEPLOYMENTS ?? 500);
const RULES = Number(process.env.BENCH_ALERT_RULES ?? 10_000);
const RUNS = Number(process.env.BENCH_ALERT_RUNS ?? 5);
const SCRAPE_SECONDS = 1;

// vLLM-like metrics that grow with time: every deployment serves ~4 requests/s, 2% aborted, ~0.45 s end to end.
const started = Date.now();
const BUCKETS = [0.1, 0.3, 0.5, 0.8, 1, 2.5, 5];
function exposition(): string {
  const seconds = (Date.now() - started) / 1000;
  const requests = Math.floor(seconds * 4);
  const histogram = (name: string, share: (le: number) => number) => [
    ...BUCKETS.map((le) => `${name}_bucket{le="${le}"} ${Math.floor(requests * share(le))}`),
    `${name}_bucket{le="+Inf"} ${requests}`, `${name}_count ${requests}`, `${name}_sum ${requests * 0.45}`,
  ];
  return [
    `vllm:request_success_total{finished_reason="stop"} ${Math.floor(requests * 0.98)}`,
    `vllm:request_success_total{finished_reason="abort"} ${Math.floor(requests * 0.02)}`,
    `vllm:num_requests_waiting ${requests % 5}`, `vllm:num_requests_running ${requests % 3}`,
    ...histogram('vllm:e2e_request_latency_seconds', (le) => (le >= 0.5 ? 1 : le >= 0.3 ? 0.2 : 0)),
    ...histogram('vllm:time_to_first_token_seconds', (le) => (le >= 0.1 ? 1 : 0)),
    '',
  ].join('\n');
}
const exporter = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(exposition()));
await new Promise<void>((resolve) => exporter.listen(0, '127.0.0.1', resolve));
const target = `127.0.0.1:${(exporter.address() as AddressInfo).port}`;

const organizations = Array.from({ length: ORGANIZATIONS }, (_, i) => `org_bench${String(i).padStart(15, '0')}`);
const deployments: DeploymentFacts[] = Array.from({ length: DEPLOYMENTS }, (_, i) => ({
  organizationId: organizations[i % ORGANIZATIONS]!, name: `model-${i}`, status: i % 50 === 0 ? 'failed' : 'running', gpu: 'nvidia-l4',
  gpusPerReplica: 1, replicas: 1, currentReplicas: 1, maxReplicas: i % 7 === 0 ? 1 : 3,
}));

const dir = await mkdtemp(join(tmpdir(), 'kiln-bench-alerts-'));
const port = await freePort();
await writeFile(join(dir, 'prometheus.yml'), JSON.stringify({
  global: { scrape_interval: `${SCRAPE_SECONDS}s` },
  scrape_configs: [{
    job_name: 'vllm',
    static_configs: deployments.map((d) => ({ targets: [target], labels: { namespace: namespaceOf(d.organizationId), deployment: d.name } })),
  }],
}));
const prometheus = await startProcess('prometheus', binaryPath('prometheus'), [
  `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn',
], { logFile: join(dir, 'prometheus.log') });
const url = `http://127.0.0.1:${port}`;
await waitUntilReady(prometheus, async () => (await fetch(`${url}/-/ready`)).ok);
const client = createPrometheusClient(url, 60_000);

const windowSeconds = rateWindowSeconds(15);
console.log(`Prometheus scraping ${DEPLOYMENTS} deployments of ${ORGANIZATIONS} organizations every ${SCRAPE_SECONDS} s; waiting ${windowSeconds + 5} s for a rate window of samples`);
await sleep((windowSeconds + 5) * 1000);

/** Rules of every kind, spread over the organizations: on one deployment or on the whole organization. */
function rules(count: number): LoadedRule[] {
  return Array.from({ length: count }, (_, i) => {
    const organizationId = organizations[i % ORGANIZATIONS]!;
    const own = deployments.filter((d) => d.organizationId === organizationId);
    const deployment = i % 3 === 0 ? undefined : own[i % own.length];
    const metric: AlertMetric = ALERT_METRICS[i % ALERT_METRICS.length]!;
    return {
      id: `alr_bench${i}`, organizationId, name: `rule ${i}`, metric, deploymentId: deployment ? `dep_${deployment.name}` : null, deploymentName: deployment?.name ?? null,
      quantile: (['p50', 'p95', 'p99'] as const)[i % 3]!, comparison: 'above', threshold: metric === 'spend' ? 100 : metric === 'error_rate' ? 0.01 : 0.4,
      forSeconds: 30, period: i % 2 ? 'day' : 'month', basis: i % 4 < 2 ? 'actual' : 'forecast', action: 'notify', state: 'ok', since: null, updatedAt: new Date(),
    };
  });
}

async function time(label: string, set: LoadedRule[]): Promise<number[]> {
  const figures: number[] = [];
  let firing = 0;
  let noData = 0;
  for (let run = 0; run < RUNS; run++) {
    const t0 = performance.now();
    const outcomes = await evaluateRules(set, deployments, { prometheus: client, namespaceOf, windowSeconds, now: new Date() });
    figures.push(performance.now() - t0);
    firing = outcomes.filter((o) => o.state !== 'ok').length;
    noData = outcomes.filter((o) => o.value === null).length;
  }
  const sorted = [...figures].sort((a, b) => a - b);
  console.log(`${label}: p50 ${sorted[Math.floor(RUNS / 2)]!.toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms over ${RUNS} runs (${firing} holding, ${noData} without data)`);
  return sorted;
}

try {
  const baseline = await time('baseline, 1 rule', rules(1));
  const many = await time(`alert evaluation time for ${RULES.toLocaleString('en')} rules`, rules(RULES));
  const p50 = many[Math.floor(RUNS / 2)]!;
  console.log(`  ${(p50 / RULES * 1000).toFixed(1)} µs a rule; ${(p50 / baseline[Math.floor(RUNS / 2)]!).toFixed(1)}x the one-rule baseline; `
    + `one pass every 15 s leaves ${(100 - (p50 / 150)).toFixed(1)}% of the interval idle`);
} finally {
  await prometheus.stop();
  exporter.close();
  await rm(dir, { recursive: true, force: true });
}
