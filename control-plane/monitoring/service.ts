// The metric routes: a deployment's series, read from Prometheus with the PromQL of deployment-metrics.ts.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { DeploymentNotFoundError } from '../core/errors.ts';
import { DeploymentSchema } from '../deployments/deployment.entity.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { deploymentQueries } from './deployment-metrics.ts';
import type { PrometheusClient, RangeQuery } from './prometheus.ts';
import type { DeploymentMetricsInput } from './schemas.ts';

type Points = Array<[number, number | null]>;

export function createMonitoringService(deps: { prometheus: PrometheusClient }) {
  /** One series over the range, every step present (null where PromQL has no sample). */
  async function series(promql: string, range: RangeQuery): Promise<Points> {
    const [result] = await deps.prometheus.queryRange(promql, range);
    const byTime = new Map(result?.points.map(([time, value]) => [time, Number.isFinite(value) ? value : null]));
    const points: Points = [];
    for (let time = range.start.getTime() / 1000; time <= range.end.getTime() / 1000; time += range.stepSeconds) points.push([time, byTime.get(time) ?? null]);
    return points;
  }

  return {
    async deploymentMetrics(em: EntityManager, principal: Principal, id: string, query: DeploymentMetricsInput) {
      const deployment = await em.findOne(DeploymentSchema, { id, organization: principal.organizationId, deletedAt: null });
      if (!deployment) throw new DeploymentNotFoundError(`Deployment ${id} not found`);
      const queries = deploymentQueries({ namespace: namespaceOf(principal.organizationId), deployment: deployment.name }, query.stepSeconds);
      // Whole steps since the epoch: every query's points fall on the same instants, and a repeated request asks
      // Prometheus for the same ones.
      const align = (date: Date) => new Date(Math.floor(date.getTime() / 1000 / query.stepSeconds) * query.stepSeconds * 1000);
      const range = { start: align(query.from), end: align(query.to), stepSeconds: query.stepSeconds };
      const read = (promql: string) => series(promql, range);
      const percentiles = async (q: Record<'p50' | 'p95' | 'p99', string>) => ({ p50: await read(q.p50), p95: await read(q.p95), p99: await read(q.p99) });
      const [requestsPerSecond, errorsPerSecond, promptTokensPerSecond, generationTokensPerSecond, timeToFirstTokenSeconds, e2eLatencySeconds,
        requestsRunning, requestsWaiting, kvCacheUsage, readyReplicas] = await Promise.all([
        read(queries.requestsPerSecond), read(queries.errorsPerSecond), read(queries.promptTokensPerSecond), read(queries.generationTokensPerSecond),
        percentiles(queries.timeToFirstTokenSeconds), percentiles(queries.e2eLatencySeconds),
        read(queries.requestsRunning), read(queries.requestsWaiting), read(queries.kvCacheUsage), read(queries.readyReplicas),
      ]);
      return {
        deploymentId: id, from: range.start.toISOString(), to: range.end.toISOString(), stepSeconds: query.stepSeconds,
        series: {
          requestsPerSecond, errorsPerSecond, promptTokensPerSecond, generationTokensPerSecond, timeToFirstTokenSeconds, e2eLatencySeconds,
          requestsRunning, requestsWaiting, kvCacheUsage, readyReplicas,
        },
      };
    },
  };
}

export type MonitoringService = ReturnType<typeof createMonitoringService>;
