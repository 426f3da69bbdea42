// What the metric routes show, as PromQL over vLLM's own metrics (the names a real vLLM and the local
// simulator both expose), selected by the labels Prometheus gives a model server's series from its pod
// (infra/servers/prometheus.ts): the organization's namespace and the deployment's name. Every query is
// aggregated by deployment, so one query serves one deployment or a whole organization.
import type { InstantSample, PrometheusClient } from './client.ts';

export interface SeriesScope {
  readonly namespace: string;
  /** One deployment; all of the namespace's when absent. */
  readonly deployment?: string;
}

/** A rate needs two scrapes in its window: at least 4 scrape intervals (5 s each), and no less than a step. */
export function rateWindowSeconds(stepSeconds: number): number {
  return Math.max(20, stepSeconds);
}

export const QUANTILES = { p50: 0.5, p95: 0.95, p99: 0.99 } as const;
export type Quantile = keyof typeof QUANTILES;

export const METRICS = [
  'requestsPerSecond', 'errorsPerSecond', 'promptTokensPerSecond', 'generationTokensPerSecond', 'requestsRunning', 'requestsWaiting', 'kvCacheUsage', 'readyReplicas',
] as const;
export const LATENCIES = ['timeToFirstTokenSeconds', 'e2eLatencySeconds'] as const;
export type MetricName = (typeof METRICS)[number];
export type LatencyName = (typeof LATENCIES)[number];

/** Names and label values here are DNS labels (namespaces, deployment names): nothing to escape. */
const selector = (s: SeriesScope, extra = '') => `{namespace="${s.namespace}"${s.deployment ? `,deployment="${s.deployment}"` : ''}${extra}}`;

export function metricQueries(s: SeriesScope, windowSeconds: number): Record<MetricName, string> & Record<LatencyName, Record<Quantile, string>> {
  const window = `${windowSeconds}s`;
  const rate = (metric: string, extra = '') => `sum by (deployment) (rate(${metric}${selector(s, extra)}[${window}]))`;
  const quantiles = (histogram: string) => Object.fromEntries(Object.entries(QUANTILES).map(([name, q]) =>
    [name, `histogram_quantile(${q}, sum by (le, deployment) (rate(${histogram}_bucket${selector(s)}[${window}])))`])) as Record<Quantile, string>;
  return {
    requestsPerSecond: rate('vllm:request_success_total'),
    // vLLM counts a request that ends without finishing (a client gone, an engine error) as an abort.
    errorsPerSecond: rate('vllm:request_success_total', ',finished_reason="abort"'),
    promptTokensPerSecond: rate('vllm:prompt_tokens_total'),
    generationTokensPerSecond: rate('vllm:generation_tokens_total'),
    timeToFirstTokenSeconds: quantiles('vllm:time_to_first_token_seconds'),
    e2eLatencySeconds: quantiles('vllm:e2e_request_latency_seconds'),
    requestsRunning: `sum by (deployment) (vllm:num_requests_running${selector(s)})`,
    requestsWaiting: `sum by (deployment) (vllm:num_requests_waiting${selector(s)})`,
    kvCacheUsage: `avg by (deployment) (vllm:kv_cache_usage_perc${selector(s)})`,
    // Replicas whose model server answered its last scrape.
    readyReplicas: `sum by (deployment) (up${selector(s)})`,
  };
}

/**
 * What Kiln's autoscaler reads of one deployment (catalog/autoscaling.ts MeasuredLoad): requests in flight now
 * (running and waiting, over its replicas) and requests finished within the last `windowSeconds`.
 */
export async function measureDeploymentLoad(prometheus: PrometheusClient, s: SeriesScope, windowSeconds: number, at = new Date()): Promise<{ inFlight: number; recentRequests: number }> {
  const queries = metricQueries(s, windowSeconds);
  const [running, waiting, recent] = await Promise.all([
    prometheus.query(queries.requestsRunning, at),
    prometheus.query(queries.requestsWaiting, at),
    prometheus.query(`sum by (deployment) (increase(vllm:request_success_total${selector(s)}[${windowSeconds}s]))`, at),
  ]);
  const total = (samples: InstantSample[]) => samples.reduce((sum, sample) => sum + (Number.isFinite(sample.value) ? sample.value : 0), 0);
  return { inFlight: total(running) + total(waiting), recentRequests: total(recent) };
}
