// Replica-hours a deployment's model servers served, as Prometheus measured them: their ready replicas
// (`up`) sampled every SPEND_RESOLUTION_SECONDS over a period. What deployments cost (control-plane/costs/)
// and the spend of budget rules (lib/alerts/) are both those hours at the catalog's price (catalog/gpu-types.ts).
import type { PrometheusClient } from './client.ts';

/** How finely ready replicas are sampled to add up replica-hours (a replica up for less goes unseen). */
export const SPEND_RESOLUTION_SECONDS = 15;

/**
 * Replica-hours each deployment of `namespace` served from `since` to `at`, by deployment name: one
 * deployment's when `name` is given, every deployment's of the namespace otherwise.
 */
export async function replicaHoursSince(prometheus: PrometheusClient, namespace: string, name: string | undefined, since: Date, at: Date): Promise<Map<string, number>> {
  const selector = `{namespace="${namespace}"${name ? `,deployment="${name}"` : ''}}`;
  const seconds = Math.max(SPEND_RESOLUTION_SECONDS, Math.floor((at.getTime() - since.getTime()) / 1000));
  const samples = await prometheus.query(`sum_over_time(sum by (deployment) (up${selector})[${seconds}s:${SPEND_RESOLUTION_SECONDS}s])`, at);
  return new Map(samples.map((s) => [s.labels.deployment ?? '', Math.round(((s.value * SPEND_RESOLUTION_SECONDS) / 3600) * 1000) / 1000]));
}
