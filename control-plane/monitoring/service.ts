// The metric routes: series and current figures read from Prometheus with the PromQL of deployment-metrics.ts,
// for one deployment or for each of an organization's live deployments.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { DeploymentNotFoundError } from '../core/errors.ts';
import { DeploymentSchema } from '../deployments/deployment.entity.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { LATENCIES, METRICS, metricQueries, QUANTILES, rateWindowSeconds, type LatencyName, type MetricName, type Quantile, type SeriesScope } from '../../lib/prometheus/deployment-metrics.ts';
import type { PrometheusClient, RangeQuery } from '../../lib/prometheus/client.ts';
import { createUsageAnalytics } from './analytics.ts';
import type { MetricsRangeInput } from './schemas.ts';

type Points = Array<{ time: number; value: number | null }>;
type Series = Record<MetricName, Points> & Record<LatencyName, Record<Quantile, Points>>;
type Current = Record<MetricName, number | null> & Record<LatencyName, Record<Quantile, number | null>>;

/** The window the current figures (GET /v1/metrics) are rates over. */
export const CURRENT_WINDOW_SECONDS = 60;
const QUANTILE_NAMES = Object.keys(QUANTILES) as Quantile[];
/** Every query of a scope: a metric, or a latency's quantile. */
const QUERY_KEYS = [...METRICS.map((m) => [m] as const), ...LATENCIES.flatMap((l) => QUANTILE_NAMES.map((q) => [l, q] as const))];

const finite = (value: number) => (Number.isFinite(value) ? value : null);

export function createMonitoringService(deps: { prometheus: PrometheusClient }) {
  const promql = (scope: SeriesScope, windowSeconds: number) => {
    const queries = metricQueries(scope, windowSeconds);
    return QUERY_KEYS.map((key) => (key.length === 1 ? queries[key[0]] : queries[key[0]][key[1]]));
  };

  /** Every metric over the range, by deployment name; every step present (null where PromQL has no sample). */
  async function seriesByDeployment(scope: SeriesScope, range: RangeQuery, names: readonly string[]): Promise<Map<string, Series>> {
    const grid: number[] = [];
    for (let time = range.start.getTime() / 1000; time <= range.end.getTime() / 1000; time += range.stepSeconds) grid.push(time);
    const results = await Promise.all(promql(scope, rateWindowSeconds(range.stepSeconds)).map((q) => deps.prometheus.queryRange(q, range)));
    const empty = (): Series => Object.fromEntries(QUERY_KEYS.map(([m]) => [m, {}])) as unknown as Series;
    const byName = new Map(names.map((name) => [name, empty()]));
    QUERY_KEYS.forEach((key, i) => {
      const found = new Map(results[i]!.map((s) => [s.labels.deployment ?? '', new Map(s.points.map(([t, v]) => [t, finite(v)]))]));
      for (const [name, series] of byName) {
        const values = found.get(name);
        const points: Points = grid.map((time) => ({ time, value: values?.get(time) ?? null }));
        if (key.length === 1) series[key[0]] = points;
        else series[key[0]][key[1]] = points;
      }
    });
    return byName;
  }

  /** The range on whole steps since the epoch: every query's points fall on the same instants. */
  const alignedRange = (query: MetricsRangeInput): RangeQuery => {
    const align = (date: Date) => new Date(Math.floor(date.getTime() / 1000 / query.stepSeconds) * query.stepSeconds * 1000);
    return { start: align(query.from), end: align(query.to), stepSeconds: query.stepSeconds };
  };

  const analytics = createUsageAnalytics(deps);

  const liveDeployments = (em: EntityManager, principal: Principal) =>
    em.find(DeploymentSchema, { organization: principal.organizationId, deletedAt: null }, { orderBy: { name: 'asc' }, fields: ['id', 'name', 'status'] });

  return {
    /** GET /v1/deployments/{id}/metrics */
    async deploymentMetrics(em: EntityManager, principal: Principal, id: string, query: MetricsRangeInput) {
      const deployment = await em.findOne(DeploymentSchema, { id, organization: principal.organizationId, deletedAt: null });
      if (!deployment) throw new DeploymentNotFoundError(`Deployment ${id} not found`);
      const range = alignedRange(query);
      const series = await seriesByDeployment({ namespace: namespaceOf(principal.organizationId), deployment: deployment.name }, range, [deployment.name]);
      return { deploymentId: id, from: range.start.toISOString(), to: range.end.toISOString(), stepSeconds: range.stepSeconds, series: series.get(deployment.name)! };
    },

    /** GET /v1/monitoring/metrics: the same series for each of the organization's live deployments. */
    async organizationMetrics(em: EntityManager, principal: Principal, query: MetricsRangeInput) {
      const deployments = await liveDeployments(em, principal);
      const range = alignedRange(query);
      const series = await seriesByDeployment({ namespace: namespaceOf(principal.organizationId) }, range, deployments.map((d) => d.name));
      return {
        from: range.start.toISOString(), to: range.end.toISOString(), stepSeconds: range.stepSeconds,
        deployments: deployments.map((d) => ({ deploymentId: d.id, name: d.name, status: d.status, series: series.get(d.name)! })),
      };
    },

    /** GET /v1/monitoring/analytics: requests and tokens by deployment and API key, with latency, over a range. */
    analytics: (em: EntityManager, principal: Principal, query: MetricsRangeInput) => analytics.usage(em, principal, alignedRange(query)),

    /** GET /v1/metrics: the organization's figures now (rates over the last minute), by deployment and in total. */
    async currentMetrics(em: EntityManager, principal: Principal) {
      const deployments = await liveDeployments(em, principal);
      const at = new Date();
      const results = await Promise.all(promql({ namespace: namespaceOf(principal.organizationId) }, CURRENT_WINDOW_SECONDS).map((q) => deps.prometheus.query(q, at)));
      const current = (name: string): Current => {
        const figures = Object.fromEntries(METRICS.map((m) => [m, null])) as unknown as Current;
        for (const l of LATENCIES) figures[l] = { p50: null, p95: null, p99: null };
        QUERY_KEYS.forEach((key, i) => {
          const sample = results[i]!.find((s) => s.labels.deployment === name);
          const value = sample ? finite(sample.value) : null;
          if (key.length === 1) figures[key[0]] = value;
          else figures[key[0]][key[1]] = value;
        });
        return figures;
      };
      const byDeployment = deployments.map((d) => ({ deploymentId: d.id, name: d.name, status: d.status, ...current(d.name) }));
      const total = (metric: 'requestsPerSecond' | 'errorsPerSecond' | 'promptTokensPerSecond' | 'generationTokensPerSecond' | 'requestsRunning' | 'requestsWaiting' | 'readyReplicas') =>
        byDeployment.reduce((sum, d) => sum + (d[metric] ?? 0), 0);
      return {
        at: at.toISOString(), windowSeconds: CURRENT_WINDOW_SECONDS,
        totals: {
          deployments: deployments.length,
          requestsPerSecond: total('requestsPerSecond'), errorsPerSecond: total('errorsPerSecond'),
          promptTokensPerSecond: total('promptTokensPerSecond'), generationTokensPerSecond: total('generationTokensPerSecond'),
          requestsRunning: total('requestsRunning'), requestsWaiting: total('requestsWaiting'), readyReplicas: total('readyReplicas'),
        },
        deployments: byDeployment,
      };
    },
  };
}

export type MonitoringService = ReturnType<typeof createMonitoringService>;
