// Kiln's autoscaler: how many replicas a deployment should run, from vLLM's load. The deployment's workflow
// measures the load every AUTOSCALE_INTERVAL_SECONDS and applies what `nextReplicas` says, so every scale is
// a durable step (no HorizontalPodAutoscaler owns `replicas`). The API checks a policy against POLICY_BOUNDS.

/** A deployment's autoscaling settings. */
export interface AutoscalingPolicy {
  /** Requests in flight (running + waiting in vLLM's queue) one replica should carry. */
  readonly targetRequestsPerReplica: number;
  /** Load must stay below what fewer replicas carry this long before they are removed. */
  readonly scaleDownDelaySeconds: number;
  /** With minReplicas 0: no request for this long scales the deployment to zero. */
  readonly scaleToZeroAfterSeconds: number;
}

export const DEFAULT_AUTOSCALING: AutoscalingPolicy = { targetRequestsPerReplica: 16, scaleDownDelaySeconds: 300, scaleToZeroAfterSeconds: 900 };

export const POLICY_BOUNDS: { readonly [K in keyof AutoscalingPolicy]: { readonly min: number; readonly max: number } } = {
  targetRequestsPerReplica: { min: 1, max: 1024 },
  scaleDownDelaySeconds: { min: 5, max: 86_400 },
  scaleToZeroAfterSeconds: { min: 10, max: 7 * 86_400 },
};

/** How often a deployment whose bounds leave room (minReplicas < maxReplicas) measures its load. */
export const AUTOSCALE_INTERVAL_SECONDS = 10;

/** What Prometheus measured of a deployment's model servers (lib/prometheus/deployment-metrics.ts autoscalerQueries). */
export interface MeasuredLoad {
  /** Requests being generated and waiting in vLLM's queues, summed over the replicas. */
  readonly inFlight: number;
  /** Requests finished within the last scaleToZeroAfterSeconds. */
  readonly recentRequests: number;
}

export interface ScalingBounds {
  readonly minReplicas: number;
  readonly maxReplicas: number;
}

/** What the workflow remembers between measurements (workflow time, ms). */
export interface AutoscalerMemory {
  /** When the replicas last changed (a scale, a wake, a rollout). */
  readonly changedAt: number;
  /** Since when the load has fitted fewer replicas than run; undefined while it does not. */
  readonly lowSince?: number | undefined;
}

export interface ScalingDecision {
  readonly replicas: number;
  readonly memory: AutoscalerMemory;
  /** Why, for the scale's event. */
  readonly reason?: string;
}

/** Replicas the load needs at the policy's target, within the bounds (at least one while there is load). */
export function replicasFor(inFlight: number, policy: AutoscalingPolicy, bounds: ScalingBounds): number {
  const wanted = Math.ceil(inFlight / policy.targetRequestsPerReplica);
  return Math.min(bounds.maxReplicas, Math.max(bounds.minReplicas, wanted, inFlight > 0 ? 1 : 0));
}

/**
 * The next replica count: up at once when the load needs more; down to what the load needs once it has fitted
 * fewer for scaleDownDelaySeconds (never below one: only idleness scales to zero); to zero, with minReplicas 0,
 * after scaleToZeroAfterSeconds with no request and none in flight.
 */
export function nextReplicas(current: number, load: MeasuredLoad, policy: AutoscalingPolicy, bounds: ScalingBounds, memory: AutoscalerMemory, now: number): ScalingDecision {
  const needed = replicasFor(load.inFlight, policy, bounds);
  if (needed > current) {
    return { replicas: needed, memory: { changedAt: now }, reason: `${load.inFlight} requests in flight need ${needed} replica(s) at ${policy.targetRequestsPerReplica} each` };
  }
  const idleFor = now - memory.changedAt;
  if (bounds.minReplicas === 0 && current > 0 && load.inFlight === 0 && load.recentRequests === 0 && idleFor >= policy.scaleToZeroAfterSeconds * 1000) {
    return { replicas: 0, memory: { changedAt: now }, reason: `no request for ${policy.scaleToZeroAfterSeconds} s` };
  }
  const floor = Math.max(needed, bounds.minReplicas, current > 0 ? 1 : 0);
  if (floor >= current) return { replicas: current, memory: { changedAt: memory.changedAt } };
  const lowSince = memory.lowSince ?? now;
  if (now - lowSince >= policy.scaleDownDelaySeconds * 1000) {
    return { replicas: floor, memory: { changedAt: now }, reason: `${load.inFlight} requests in flight for ${policy.scaleDownDelaySeconds} s need ${floor} replica(s)` };
  }
  return { replicas: current, memory: { changedAt: memory.changedAt, lowSince } };
}
