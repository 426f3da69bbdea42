// A deployment's load over the optimization window, as the optimization rules (catalog/optimization-rules.ts)
// read it: rates over the window, the gauges' mean and peak sampled every GAUGE_RESOLUTION_SECONDS, and p95
// time to first token, with the PromQL of deployment-metrics.ts. The API's recommendations
// (control-plane/optimization/) and the worker's auto-apply (workflows/optimization/) both measure with it.
import type { MeasuredLoad } from '../../catalog/optimization-rules.ts';
import type { PrometheusClient } from './client.ts';
import { metricQueries } from './deployment-metrics.ts';

/** The window the recommendations measure load over. */
export const OPTIMIZATION_WINDOW_SECONDS = 3600;
/** How finely gauges (queue, KV cache, replicas) are sampled for their mean and peak over the window. */
const GAUGE_RESOLUTION_SECONDS = 15;

/** The load of `deployment` (its name) in `namespace` over the window ending `at`; null where Prometheus has no sample. */
export async function measureOptimizationLoad(prometheus: PrometheusClient, namespace: string, deployment: string, at: Date): Promise<MeasuredLoad> {
  const window = OPTIMIZATION_WINDOW_SECONDS;
  const q = metricQueries({ namespace, deployment }, window);
  const over = (fn: 'avg' | 'max', query: string) => `${fn}_over_time((${query})[${window}s:${GAUGE_RESOLUTION_SECONDS}s])`;
  const queries = {
    requestsPerSecond: q.requestsPerSecond,
    generationTokensPerSecond: q.generationTokensPerSecond,
    requestsRunningAvg: over('avg', q.requestsRunning),
    requestsRunningMax: over('max', q.requestsRunning),
    requestsWaitingAvg: over('avg', q.requestsWaiting),
    requestsWaitingMax: over('max', q.requestsWaiting),
    kvCacheUsageMax: over('max', q.kvCacheUsage),
    kvCacheUsageAvg: over('avg', q.kvCacheUsage),
    readyReplicasAvg: over('avg', q.readyReplicas),
    p95TimeToFirstTokenSeconds: q.timeToFirstTokenSeconds.p95,
  } as const;
  const names = Object.keys(queries) as Array<keyof typeof queries>;
  const results = await Promise.all(names.map((name) => prometheus.query(queries[name], at)));
  const figures = Object.fromEntries(names.map((name, i) => {
    const value = results[i]!.find((s) => s.labels.deployment === deployment)?.value;
    return [name, value !== undefined && Number.isFinite(value) ? value : null];
  })) as Record<keyof typeof queries, number | null>;
  return { from: new Date(at.getTime() - window * 1000).toISOString(), to: at.toISOString(), windowSeconds: window, ...figures };
}
