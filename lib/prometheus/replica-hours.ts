// Replica-hours a deployment's model servers served, as Prometheus measured them: their ready replicas
// (`up`) sampled at a fixed resolution over a period. What deployments cost (control-plane/costs/) and the
// spend of budget rules (lib/alerts/) are both those hours at the catalog's price (catalog/gpu-types.ts).
import type { PrometheusClient } from './client.ts';

/** The coarsest resolution ready replicas are sampled at, for periods of a day or more (a month is 178k steps). */
export const SPEND_RESOLUTION_SECONDS = 15;

/**
 * How finely a period of `seconds` is sampled: every second for an hour or less, coarser as the period grows,
 * so each query stays under about 3,600 steps a series until the 15 s floor. A replica up for less than the
 * resolution goes unseen, so the short windows (a cost per million tokens over the last hour) count replicas
 * that ran only seconds.
 */
export function spendResolutionSeconds(seconds: number): number {
  return Math.min(SPEND_RESOLUTION_SECONDS, Math.max(1, Math.ceil(seconds / 3600)));
}

/** Whole seconds from `since` to `at`, at least one. */
export const periodSeconds = (since: Date, at: Date) => Math.max(1, Math.floor((at.getTime() - since.getTime()) / 1000));

/**
 * Replica-hours each deployment of `namespace` served from `since` to `at`, by deployment name: one
 * deployment's when `name` is given, every deployment's of the namespace otherwise. Periods shown side by side
 * (today's spend beside the month's) pass one `step`, so the shorter never counts more than the longer.
 */
export async function replicaHoursSince(
  prometheus: PrometheusClient, namespace: string, name: string | undefined, since: Date, at: Date,
  step = spendResolutionSeconds(periodSeconds(since, at)),
): Promise<Map<string, number>> {
  const selector = `{namespace="${namespace}"${name ? `,deployment="${name}"` : ''}}`;
  const seconds = periodSeconds(since, at);
  const samples = await prometheus.query(`sum_over_time(sum by (deployment) (up${selector})[${seconds}s:${step}s])`, at);
  return new Map(samples.map((s) => [s.labels.deployment ?? '', Math.round(((s.value * step) / 3600) * 1000) / 1000]));
}
