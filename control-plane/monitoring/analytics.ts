// GET /v1/monitoring/analytics: usage over time. Requests and tokens come from the audit records of inference
// calls (each names its deployment and API key, with the model server's token counts); latency percentiles
// from Prometheus, which measured them at the model servers.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { metricQueries, rateWindowSeconds } from '../../lib/prometheus/deployment-metrics.ts';
import type { PrometheusClient, RangeQuery } from '../../lib/prometheus/client.ts';

interface UsageRow { bucket: string | number; deploymentId: string; apiKeyId: string | null; requests: number; promptTokens: number; completionTokens: number }

export interface UsagePoint { time: number; requests: number; promptTokens: number; completionTokens: number }

/** Inference calls are the audited requests (alias `a`) whose details say how the relay ended (`completed`), with the model server's token counts. */
export const INFERENCE_CALLS = `a.resource_type = 'deployment' AND a.details->'completed' IS NOT NULL`;

const INFERENCE_USAGE = `
  SELECT floor(extract(epoch FROM a.created_at) / ?) * ? AS bucket, a.resource_id AS "deploymentId", a.api_key_id AS "apiKeyId",
    count(*)::int AS requests,
    coalesce(sum((a.details->>'promptTokens')::int), 0)::int AS "promptTokens",
    coalesce(sum((a.details->>'completionTokens')::int), 0)::int AS "completionTokens"
  FROM audit_log a
  WHERE a.organization_id = ? AND a.created_at >= ?::timestamptz AND a.created_at < ?::timestamptz
    AND ${INFERENCE_CALLS}
  GROUP BY 1, 2, 3`;

export function createUsageAnalytics(deps: { prometheus: PrometheusClient }) {
  return {
    async usage(em: EntityManager, principal: Principal, range: RangeQuery) {
      const step = range.stepSeconds;
      const [rows, deployments, keys, latency] = await Promise.all([
        em.getConnection().execute<UsageRow[]>(INFERENCE_USAGE, [step, step, principal.organizationId, range.start.toISOString(), new Date(range.end.getTime() + step * 1000).toISOString()]),
        em.getConnection().execute<Array<{ id: string; name: string }>>('SELECT id, name FROM deployment WHERE organization_id = ?', [principal.organizationId]),
        em.getConnection().execute<Array<{ id: string; name: string; prefix: string }>>('SELECT id, name, prefix FROM api_key WHERE organization_id = ?', [principal.organizationId]),
        // Each bucket's latency is read at its end, over the bucket: shifted by a step, then put back on the bucket's start.
        deps.prometheus.queryRange(metricQueries({ namespace: namespaceOf(principal.organizationId) }, rateWindowSeconds(step)).e2eLatencySeconds.p95, {
          start: new Date(range.start.getTime() + step * 1000), end: new Date(range.end.getTime() + step * 1000), stepSeconds: step,
        }),
      ]);
      const grid: number[] = [];
      for (let time = range.start.getTime() / 1000; time <= range.end.getTime() / 1000; time += step) grid.push(time);
      const group = (key: (row: UsageRow) => string | null) => {
        const byKey = new Map<string, Map<number, UsagePoint>>();
        for (const row of rows) {
          const id = key(row);
          if (id === null) continue;
          const points = byKey.get(id) ?? byKey.set(id, new Map()).get(id)!;
          const time = Number(row.bucket);
          const point = points.get(time) ?? { time, requests: 0, promptTokens: 0, completionTokens: 0 };
          points.set(time, { time, requests: point.requests + row.requests, promptTokens: point.promptTokens + row.promptTokens, completionTokens: point.completionTokens + row.completionTokens });
        }
        return [...byKey].map(([id, points]) => ({ id, points: grid.map((time) => points.get(time) ?? { time, requests: 0, promptTokens: 0, completionTokens: 0 }) }));
      };
      const deploymentName = new Map(deployments.map((d) => [d.id, d.name]));
      const keyOf = new Map(keys.map((k) => [k.id, k]));
      return {
        from: range.start.toISOString(), to: range.end.toISOString(), stepSeconds: step,
        byDeployment: group((row) => row.deploymentId).map(({ id, points }) => {
          const name = deploymentName.get(id) ?? null;
          const measured = new Map(latency.find((s) => s.labels.deployment === name)?.points.map(([t, v]) => [t - step, Number.isFinite(v) ? v : null]));
          return { deploymentId: id, name, points, e2eLatencyP95Seconds: grid.map((time) => ({ time, value: measured.get(time) ?? null })) };
        }),
        byApiKey: group((row) => row.apiKeyId).map(({ id, points }) => ({ apiKeyId: id, name: keyOf.get(id)?.name ?? null, prefix: keyOf.get(id)?.prefix ?? null, points })),
      };
    },
  };
}

export type UsageAnalytics = ReturnType<typeof createUsageAnalytics>;
