// The value each alert rule compares, measured for many rules at once: one Prometheus query per organization
// and kind of figure (the per-deployment PromQL of lib/prometheus/deployment-metrics.ts, the replica-hours of
// lib/prometheus/replica-hours.ts priced by the catalog), shared by every rule that needs it; the deployment's
// state (replicas at maximum, failed) from the facts the caller read. A rule on one deployment reads its
// series; a rule on the whole organization its worst deployment (or, for spend, their sum).
import { billableReplicas } from '../../catalog/billing.ts';
import { holdsGpus, hourlyCents, projectedCents, spentCents } from '../../catalog/gpu-types.ts';
import type { PrometheusClient } from '../prometheus/client.ts';
import { metricQueries } from '../prometheus/deployment-metrics.ts';
import { replicaHoursSince } from '../prometheus/replica-hours.ts';
import type { AlertRuleSpec } from './rules.ts';

/** What the evaluation knows of a live deployment from the database. */
export interface DeploymentFacts {
  readonly organizationId: string;
  readonly name: string;
  readonly status: string;
  readonly gpu: string;
  readonly gpusPerReplica: number;
  readonly replicas: number;
  readonly currentReplicas: number;
  readonly maxReplicas: number;
}

export interface MeasureContext {
  readonly prometheus: PrometheusClient;
  /** The namespace an organization's model servers run in (their series carry it). */
  namespaceOf(organizationId: string): string;
  /** Every live deployment of the rules' organizations. */
  readonly deployments: readonly DeploymentFacts[];
  readonly now: Date;
  /** Rates and quantiles over this window (lib/prometheus/deployment-metrics.ts rateWindowSeconds). */
  readonly windowSeconds: number;
  /** Queries in flight at once; 16 when absent. */
  readonly concurrency?: number;
}

type ByDeployment = Map<string, number>;

/** The start and end (UTC) of the day or month `at` falls in. */
export function periodBounds(period: AlertRuleSpec['period'], at: Date): { start: Date; end: Date } {
  const [y, m, d] = [at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()];
  return period === 'day'
    ? { start: new Date(Date.UTC(y, m, d)), end: new Date(Date.UTC(y, m, d + 1)) }
    : { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) };
}

/** The figure (query) a rule needs, shared by every rule of its organization that needs the same. */
function figureOf(rule: AlertRuleSpec): string | undefined {
  switch (rule.metric) {
    case 'latency': case 'time_to_first_token': return `${rule.metric}:${rule.quantile}`;
    case 'error_rate': case 'queue': return rule.metric;
    case 'spend': return `spend:${rule.period}`;
    default: return undefined; // from the database
  }
}

const finite = (samples: ReadonlyArray<{ labels: Readonly<Record<string, string>>; value: number }>): ByDeployment =>
  new Map(samples.filter((s) => Number.isFinite(s.value)).map((s) => [s.labels.deployment ?? '', s.value]));

async function inBatches<T>(tasks: ReadonlyArray<() => Promise<T>>, concurrency: number): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, tasks.length) }, async () => {
    while (next < tasks.length) await tasks[next++]!();
  });
  await Promise.all(lanes);
}

/** The value of each rule now, by rule id; null where there is no data (no traffic, a deployment gone). */
export async function measureRules(rules: readonly AlertRuleSpec[], context: MeasureContext): Promise<Map<string, number | null>> {
  const { prometheus, now, windowSeconds } = context;
  const deploymentsOf = new Map<string, DeploymentFacts[]>();
  for (const d of context.deployments) deploymentsOf.set(d.organizationId, [...(deploymentsOf.get(d.organizationId) ?? []), d]);

  // Each (organization, figure) once.
  const figures = new Map<string, ByDeployment>();
  const tasks: Array<() => Promise<void>> = [];
  const wanted = new Set<string>();
  for (const rule of rules) {
    const figure = figureOf(rule);
    const key = `${rule.organizationId}|${figure}`;
    if (!figure || wanted.has(key)) continue;
    wanted.add(key);
    const namespace = context.namespaceOf(rule.organizationId);
    const queries = metricQueries({ namespace }, windowSeconds);
    const ask = async (promql: string) => finite(await prometheus.query(promql, now));
    tasks.push(async () => {
      if (rule.metric === 'latency') figures.set(key, await ask(queries.e2eLatencySeconds[rule.quantile]));
      else if (rule.metric === 'time_to_first_token') figures.set(key, await ask(queries.timeToFirstTokenSeconds[rule.quantile]));
      else if (rule.metric === 'queue') figures.set(key, await ask(queries.requestsWaiting));
      else if (rule.metric === 'error_rate') {
        const [errors, requests] = await Promise.all([ask(queries.errorsPerSecond), ask(queries.requestsPerSecond)]);
        figures.set(key, new Map([...requests].filter(([, r]) => r > 0).map(([name, r]) => [name, (errors.get(name) ?? 0) / r])));
      } else if (rule.metric === 'spend') {
        const { start, end } = periodBounds(rule.period, now);
        const hours = await replicaHoursSince(prometheus, namespace, undefined, start, now);
        const actual: ByDeployment = new Map();
        const forecast: ByDeployment = new Map();
        for (const d of deploymentsOf.get(rule.organizationId) ?? []) {
          const spent = spentCents(d, hours.get(d.name) ?? 0);
          actual.set(d.name, spent);
          forecast.set(d.name, projectedCents(spent, hourlyCents({ ...d, replicas: billableReplicas(d.status, d.currentReplicas) }), now, end));
        }
        figures.set(`${key}:actual`, actual);
        figures.set(`${key}:forecast`, forecast);
      }
    });
  }
  await inBatches(tasks, context.concurrency ?? 16);

  const values = new Map<string, number | null>();
  for (const rule of rules) {
    const own = deploymentsOf.get(rule.organizationId) ?? [];
    const watched = rule.deploymentId === null ? own : own.filter((d) => d.name === rule.deploymentName);
    if (rule.deploymentId !== null && watched.length === 0) { values.set(rule.id, null); continue; }
    if (rule.metric === 'replicas_at_max' || rule.metric === 'deployment_failed') {
      const yes = watched.some((d) => (rule.metric === 'deployment_failed' ? d.status === 'failed' : holdsGpus(d.status) && d.currentReplicas >= d.maxReplicas));
      values.set(rule.id, yes ? 1 : 0);
      continue;
    }
    const figure = figures.get(`${rule.organizationId}|${figureOf(rule)}${rule.metric === 'spend' ? `:${rule.basis}` : ''}`) ?? new Map<string, number>();
    const measured = watched.map((d) => figure.get(d.name)).filter((v): v is number => v !== undefined);
    if (rule.metric === 'spend') values.set(rule.id, measured.reduce((sum, v) => sum + v, 0));
    else values.set(rule.id, measured.length ? Math.max(...measured) : null);
  }
  return values;
}
