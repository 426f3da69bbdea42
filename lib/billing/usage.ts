// GPU usage of a time window, from the replica history (control-plane/billing/replica-record.entity.ts): each
// record charges its replicas until the deployment's next record. One query, used where usage is closed (the
// metering workflow) and where it is read live (the usage route), so both count the same way.
import { gpuCentsPerHour } from '../../catalog/billing.ts';

/** What runs a statement with `?` placeholders (MikroORM's EntityManager.execute, in the caller's transaction). */
export interface SqlRunner {
  execute<T>(sql: string, params: unknown[]): Promise<T>;
}

export interface DeploymentUsage {
  readonly deploymentId: string;
  readonly deploymentName: string;
  readonly gpu: string;
  /** GPUs held x milliseconds, exact. */
  readonly gpuMs: number;
  readonly rateCentsPerHour: number;
  /** gpuMs x rateCentsPerHour (catalog/billing.ts USAGE_UNITS_PER_CENT make a cent). */
  readonly usageUnits: number;
}

// The window is half-open, [from, to). A record at or after `to` belongs to a later window; the last record
// before `from` says what ran when the window opened. Timestamps have millisecond precision, so the products
// are whole numbers and the cast to bigint rounds nothing.
const USAGE_SQL = `
  WITH segments AS (
    SELECT deployment_id, gpu, gpus_per_replica, replicas, observed_at AS from_at,
           lead(observed_at, 1, 'infinity'::timestamptz) OVER (PARTITION BY deployment_id ORDER BY observed_at) AS to_at
    FROM replica_record WHERE organization_id = ? AND observed_at < ?
  )
  SELECT s.deployment_id, coalesce(d.name, s.deployment_id) AS deployment_name, s.gpu,
         sum(s.replicas * s.gpus_per_replica * extract(epoch FROM least(s.to_at, ?::timestamptz) - greatest(s.from_at, ?::timestamptz)) * 1000)::bigint AS gpu_ms
  FROM segments s LEFT JOIN deployment d ON d.id = s.deployment_id
  WHERE s.to_at > ? AND s.replicas > 0
  GROUP BY s.deployment_id, d.name, s.gpu
  ORDER BY s.deployment_id, s.gpu`;

/** The GPUs running at `at`, by GPU type: each deployment's latest replica record then (those with replicas only). */
export async function gpusRunningAt(runner: SqlRunner, organizationId: string, at: Date): Promise<Array<{ gpu: string; gpus: number }>> {
  return runner.execute<Array<{ gpu: string; gpus: number }>>(`
    SELECT gpu, sum(replicas * gpus_per_replica)::int AS gpus FROM (
      SELECT DISTINCT ON (deployment_id) gpu, replicas, gpus_per_replica FROM replica_record
      WHERE organization_id = ? AND observed_at <= ? ORDER BY deployment_id, observed_at DESC) latest
    WHERE replicas > 0 GROUP BY gpu ORDER BY gpu`, [organizationId, at]);
}

/** Each deployment's GPU usage by GPU type in [from, to); deployments that used nothing are left out. */
export async function usageBetween(runner: SqlRunner, organizationId: string, from: Date, to: Date): Promise<DeploymentUsage[]> {
  const rows = await runner.execute<Array<{ deployment_id: string; deployment_name: string; gpu: string; gpu_ms: string | number }>>(
    USAGE_SQL, [organizationId, to, to, from, from]);
  return rows.map((row) => {
    const gpuMs = Number(row.gpu_ms);
    const rateCentsPerHour = gpuCentsPerHour(row.gpu);
    return { deploymentId: row.deployment_id, deploymentName: row.deployment_name, gpu: row.gpu, gpuMs, rateCentsPerHour, usageUnits: gpuMs * rateCentsPerHour };
  }).filter((usage) => usage.gpuMs > 0);
}
