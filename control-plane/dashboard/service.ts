// A dashboard's first screen in one answer: deployments by status (the database), spend today and this month
// (the costs area), tokens today and the slowest deployments (Prometheus).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import type { CostService } from '../costs/service.ts';
import { DeploymentSchema } from '../deployments/deployment.entity.ts';
import { metricQueries } from '../../lib/prometheus/deployment-metrics.ts';
import type { PrometheusClient } from '../../lib/prometheus/client.ts';
import { DEPLOYMENT_STATUSES, namespaceOf, type DeploymentLifecycleStatus } from '../../workflows/contract/deployment.ts';

const SLOWEST = 5;
const LAST_HOUR_SECONDS = 3600;

export function createDashboardService(deps: { prometheus: PrometheusClient; costs: Pick<CostService, 'organizationSpendCents'> }) {
  return {
    async metrics(em: EntityManager, principal: Principal) {
      const at = new Date();
      const today = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
      const month = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
      const namespace = namespaceOf(principal.organizationId);
      const sinceToday = `${Math.max(1, Math.floor((at.getTime() - today.getTime()) / 1000))}s`;
      const [deployments, [spentToday, spentMonth], prompt, generation, ttft] = await Promise.all([
        em.find(DeploymentSchema, { organization: principal.organizationId, deletedAt: null }, { fields: ['id', 'name', 'status'] }),
        deps.costs.organizationSpendCents(em, principal, [today, month], at),
        deps.prometheus.query(`sum(increase(vllm:prompt_tokens_total{namespace="${namespace}"}[${sinceToday}]))`, at),
        deps.prometheus.query(`sum(increase(vllm:generation_tokens_total{namespace="${namespace}"}[${sinceToday}]))`, at),
        deps.prometheus.query(metricQueries({ namespace }, LAST_HOUR_SECONDS).timeToFirstTokenSeconds.p95, at),
      ]);
      const byStatus = Object.fromEntries(DEPLOYMENT_STATUSES.map((status) => [status, 0])) as Record<DeploymentLifecycleStatus, number>;
      for (const d of deployments) byStatus[d.status] += 1;
      const idOf = new Map(deployments.map((d) => [d.name, d.id]));
      const count = (samples: Array<{ value: number }>) => Math.round(Number.isFinite(samples[0]?.value) ? samples[0]!.value : 0);
      return {
        at: at.toISOString(),
        deploymentsByStatus: byStatus,
        spend: {
          todayCents: spentToday!,
          monthCents: spentMonth!,
        },
        tokensToday: { prompt: count(prompt), generation: count(generation) },
        slowest: ttft
          .filter((s) => Number.isFinite(s.value) && idOf.has(s.labels.deployment ?? ''))
          .sort((a, b) => b.value - a.value)
          .slice(0, SLOWEST)
          .map((s) => ({ deploymentId: idOf.get(s.labels.deployment!)!, name: s.labels.deployment!, timeToFirstTokenP95Seconds: s.value })),
      };
    },
  };
}

export type DashboardService = ReturnType<typeof createDashboardService>;
