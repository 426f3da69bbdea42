// Figures as the dashboard shows them: money in US cents, and a deployment's cost per hour now.

/** 1234 -> "$12.34". */
export function money(cents: number | null | undefined): string {
  if (cents === null || cents === undefined) return '—';
  return (cents / 100).toLocaleString(undefined, { style: 'currency', currency: 'USD' });
}

/**
 * What a deployment costs per hour now, in cents: the GPU's price x GPUs per replica x replicas running
 * (costs/ prices it so: GET /v1/deployments/{id}/pricing hourlyCents). undefined while the price is unknown.
 */
export function hourlyCents(gpuHourlyUsd: number | undefined, gpusPerReplica: number, replicas: number): number | undefined {
  if (gpuHourlyUsd === undefined) return undefined;
  return Math.round(gpuHourlyUsd * 100 * gpusPerReplica * replicas);
}
