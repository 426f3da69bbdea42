// The optimization rules: what a deployment's measured load (Prometheus, over a window) says to change, each
// recommendation with the figures it rests on and what it would do to the hourly cost and to latency. Pure
// functions of their inputs (the API's optimization service and the worker's auto-apply read the figures,
// lib/prometheus/optimization-load.ts; the tests give them), so every rule can be checked with chosen numbers.
// Prices come from the catalog's price rule (hourlyCents), sizes from the model fit rules.
import { GPUS_PER_REPLICA_CHOICES, MAX_REPLICAS, MIN_REPLICAS, type Dtype } from './deployment-rules.ts';
import { findGpuType, GPU_TYPES, hourlyCents } from './gpu-types.ts';
import { modelFit } from './model-fit.ts';
import type { CatalogModel } from './models.ts';

/** Every kind of recommendation, in the order they are listed (their precedence). */
export const RECOMMENDATION_KINDS = ['more-replicas', 'larger-gpu', 'shorter-context', 'scale-to-zero', 'fewer-replicas', 'cheaper-gpu'] as const;
export type RecommendationKind = (typeof RECOMMENDATION_KINDS)[number];

/**
 * The kinds a policy's autoApply takes on its own, in precedence order: capacity cuts that save cost and that
 * the rules withhold while p95 time to first token is above the target. What adds cost or changes hardware
 * (more replicas, a larger or cheaper GPU, a shorter context) waits for a person; the autoscaler adds replicas
 * under load.
 */
export const AUTO_APPLY_KINDS = ['scale-to-zero', 'fewer-replicas'] as const satisfies readonly RecommendationKind[];
/** At most one change auto-apply makes to a deployment in this long, seconds. */
export const AUTO_APPLY_COOLDOWN_SECONDS = 3600;

/** The KV-cache use a replica is sized to: room left for bursts. */
export const TARGET_KV_CACHE_USAGE = 0.7;
/** Peak KV-cache use from which the cache is under pressure (vLLM preempts sequences when it is full). */
export const KV_CACHE_PRESSURE = 0.9;
/** Requests waiting per ready replica, on average over the window, from which the queue is long. */
export const LONG_QUEUE_PER_REPLICA = 1;
/** Decode-speed ratios within this band of 1 count as no change in latency. */
const SAME_SPEED = 0.05;

/** What Prometheus measured over the window; null where it has no sample (no traffic, no series). */
export interface MeasuredLoad {
  readonly from: string;
  readonly to: string;
  readonly windowSeconds: number;
  readonly requestsPerSecond: number | null;
  readonly generationTokensPerSecond: number | null;
  readonly requestsRunningAvg: number | null;
  readonly requestsRunningMax: number | null;
  readonly requestsWaitingAvg: number | null;
  readonly requestsWaitingMax: number | null;
  /** vLLM's KV-cache use, 0..1, averaged over the replicas: its peak and mean over the window. */
  readonly kvCacheUsageMax: number | null;
  readonly kvCacheUsageAvg: number | null;
  readonly readyReplicasAvg: number | null;
  readonly p95TimeToFirstTokenSeconds: number | null;
}

/** The deployment as it is asked to run. */
export interface DeploymentShape {
  readonly gpu: string;
  readonly gpusPerReplica: number;
  readonly replicas: number;
  readonly minReplicas: number;
  readonly maxReplicas: number;
  readonly contextLength: number | null;
  readonly dtype: Dtype;
}

/** The deployment's optimization policy (PUT /v1/deployments/{id}/optimization). */
export interface OptimizationTargets {
  readonly targetP95TimeToFirstTokenMs: number | null;
  readonly maxHourlyCents: number | null;
}

/** Another GPU type the deployment fits on (costs/service.ts alternatives): the GPUs a replica would need and the cost. */
export interface GpuAlternative {
  readonly gpu: string;
  readonly fits: boolean;
  /** Whether a GPU cluster the organization may use offers it now: no move is recommended to one that does not. */
  readonly available: boolean;
  readonly gpusPerReplica: number | null;
  readonly hourlyCents: number | null;
}

/** The desired-state change a recommendation applies (a PATCH of the deployment). */
export interface RecommendedChange {
  replicas?: number;
  minReplicas?: number;
  maxReplicas?: number;
  gpu?: string;
  gpusPerReplica?: number;
  contextLength?: number;
}

export interface Recommendation {
  readonly id: RecommendationKind;
  readonly kind: RecommendationKind;
  readonly summary: string;
  readonly evidence: { readonly window: { readonly from: string; readonly to: string; readonly seconds: number }; readonly figures: Record<string, number>; readonly reason: string };
  readonly change: RecommendedChange;
  readonly effect: {
    readonly hourlyCentsNow: number;
    readonly hourlyCentsAfter: number;
    readonly hourlyCentsChange: number;
    readonly latency: { readonly direction: 'lower' | 'higher' | 'unchanged'; readonly reason: string };
  };
}

export interface RecommendationInput {
  readonly deployment: DeploymentShape;
  readonly load: MeasuredLoad;
  readonly targets: OptimizationTargets;
  /** What Kiln knows of the model's size; undefined: memory alone decides. */
  readonly facts: CatalogModel | undefined;
  readonly alternatives: readonly GpuAlternative[];
}

const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;
const costOf = (shape: { gpu: string; gpusPerReplica: number; replicas: number }) => hourlyCents(shape);

/** Memory bandwidth a replica has on `gpus` GPUs of a type, GB/s: decoding reads every weight per token, so it bounds decode speed. */
const replicaBandwidth = (gpu: string, gpus: number) => findGpuType(gpu)!.memoryBandwidthGBps * gpus;

function speedChange(from: { gpu: string; gpus: number }, to: { gpu: string; gpus: number }) {
  const ratio = replicaBandwidth(to.gpu, to.gpus) / replicaBandwidth(from.gpu, from.gpus);
  const direction: 'lower' | 'higher' | 'unchanged' = ratio > 1 + SAME_SPEED ? 'lower' : ratio < 1 - SAME_SPEED ? 'higher' : 'unchanged';
  return {
    ratio,
    latency: {
      direction,
      reason: `a replica decodes at up to ${round(ratio, 2)}x today's speed: ${replicaBandwidth(to.gpu, to.gpus)} GB/s of GPU memory bandwidth against ${replicaBandwidth(from.gpu, from.gpus)} GB/s (decoding reads every weight per token)`,
    },
  };
}

/** GiB of KV cache a replica holds: the fit rules' figure, or without the model's figures none (undefined). */
function kvCacheGb(facts: CatalogModel | undefined, gpu: string, gpus: number, contextLength: number | null, dtype: Dtype): number | undefined {
  if (!facts) return undefined;
  return modelFit({ model: facts, gpu: findGpuType(gpu)!, gpuCount: gpus, contextLength: contextLength ?? facts.contextLength, dtype }).kvCacheGb;
}

/** The figures present, by name, for a recommendation's evidence. */
function figures(load: MeasuredLoad, names: ReadonlyArray<keyof MeasuredLoad>): Record<string, number> {
  return Object.fromEntries(names.flatMap((name) => (typeof load[name] === 'number' ? [[name, round(load[name])]] : [])));
}

/** The recommendations for one deployment, in RECOMMENDATION_KINDS order; none while it holds no replicas. */
export function recommend({ deployment, load, targets, facts, alternatives }: RecommendationInput): Recommendation[] {
  const now = costOf(deployment);
  const out: Recommendation[] = [];
  if (deployment.replicas === 0) return out;
  const window = { from: load.from, to: load.to, seconds: load.windowSeconds };
  const targetTtft = targets.targetP95TimeToFirstTokenMs;
  const ttftMs = load.p95TimeToFirstTokenSeconds === null ? null : load.p95TimeToFirstTokenSeconds * 1000;
  const latencyBreached = targetTtft !== null && ttftMs !== null && ttftMs > targetTtft;
  const withinCeiling = (cents: number) => targets.maxHourlyCents === null || cents <= targets.maxHourlyCents || cents <= now;
  const ready = Math.max(load.readyReplicasAvg ?? deployment.replicas, 1);
  const waitingPerReplica = load.requestsWaitingAvg === null ? null : load.requestsWaitingAvg / ready;
  const longQueue = waitingPerReplica !== null && (waitingPerReplica >= LONG_QUEUE_PER_REPLICA || (latencyBreached && (load.requestsWaitingMax ?? 0) > 0));
  const queued = (load.requestsWaitingMax ?? 0) > 0;
  const add = (kind: RecommendationKind, summary: string, evidence: { names: ReadonlyArray<keyof MeasuredLoad>; reason: string }, change: RecommendedChange, after: number,
    latency: Recommendation['effect']['latency']) => {
    const extra: Record<string, number> = { replicas: deployment.replicas, hourlyCents: now };
    if (targetTtft !== null) extra.targetP95TimeToFirstTokenMs = targetTtft;
    out.push({
      id: kind, kind, summary,
      evidence: { window, figures: { ...figures(load, evidence.names), ...extra }, reason: evidence.reason },
      change, effect: { hourlyCentsNow: now, hourlyCentsAfter: after, hourlyCentsChange: after - now, latency },
    });
  };

  // Long queues: more replicas, as many as serve the waiting requests at today's concurrency per replica.
  if (longQueue) {
    const perReplica = Math.max((load.requestsRunningAvg ?? 0) / ready, 1);
    let replicas = Math.min(MAX_REPLICAS, deployment.replicas + Math.ceil((load.requestsWaitingAvg ?? 0) / perReplica));
    while (replicas > deployment.replicas && !withinCeiling(costOf({ ...deployment, replicas }))) replicas -= 1;
    if (replicas > deployment.replicas) {
      add('more-replicas', `Add ${replicas - deployment.replicas} replica(s): requests queue for a free slot`, {
        names: ['requestsWaitingAvg', 'requestsWaitingMax', 'requestsRunningAvg', 'readyReplicasAvg', 'p95TimeToFirstTokenSeconds'],
        reason: `${round(waitingPerReplica!, 2)} request(s) waited per ready replica on average${latencyBreached ? `, and p95 time to first token (${Math.round(ttftMs!)} ms) is above the target` : ''}`,
      }, { replicas, ...(replicas > deployment.maxReplicas ? { maxReplicas: replicas } : {}) }, costOf({ ...deployment, replicas }), {
        direction: 'lower', reason: `the ${round(load.requestsWaitingAvg ?? 0, 2)} request(s) waiting on average get a replica of their own instead of a place in the queue`,
      });
    }
  }

  // KV-cache pressure: more cache per replica (a larger GPU), or a shorter context.
  const kvMax = load.kvCacheUsageMax;
  if (kvMax !== null && kvMax >= KV_CACHE_PRESSURE) {
    const kvNow = kvCacheGb(facts, deployment.gpu, deployment.gpusPerReplica, deployment.contextLength, deployment.dtype);
    const memoryNow = findGpuType(deployment.gpu)!.memoryGb * deployment.gpusPerReplica;
    const unavailable = new Set(alternatives.filter((a) => !a.available).map((a) => a.gpu));
    const larger = GPU_TYPES.filter((g) => g.id !== deployment.gpu && !unavailable.has(g.id) && g.memoryGb > findGpuType(deployment.gpu)!.memoryGb).flatMap((g) => {
      // The fewest GPUs of that type whose KV cache holds today's peak use at the target use.
      const gpus = GPUS_PER_REPLICA_CHOICES.find((n) => (kvNow === undefined
        ? g.memoryGb * n > memoryNow
        : (kvCacheGb(facts, g.id, n, deployment.contextLength, deployment.dtype) ?? 0) >= (kvNow * kvMax) / TARGET_KV_CACHE_USAGE));
      if (gpus === undefined) return [];
      const after = costOf({ gpu: g.id, gpusPerReplica: gpus, replicas: deployment.replicas });
      return withinCeiling(after) ? [{ gpu: g.id, gpus, after }] : [];
    }).sort((a, b) => a.after - b.after)[0];
    if (larger) {
      const kvAfter = kvCacheGb(facts, larger.gpu, larger.gpus, deployment.contextLength, deployment.dtype);
      add('larger-gpu', `Move to ${larger.gpus} ${findGpuType(larger.gpu)!.name} per replica: more room for the KV cache`, {
        names: ['kvCacheUsageMax', 'kvCacheUsageAvg', 'requestsWaitingMax'],
        reason: `the KV cache peaked at ${Math.round(kvMax * 100)}% full${kvNow === undefined ? '' : ` of ${kvNow} GB a replica`}; ${kvAfter === undefined ? `${findGpuType(larger.gpu)!.memoryGb * larger.gpus} GB of GPU memory a replica against ${memoryNow} GB` : `${kvAfter} GB of KV cache a replica there`}`,
      }, { gpu: larger.gpu, gpusPerReplica: larger.gpus, ...(deployment.contextLength === null ? {} : { contextLength: deployment.contextLength }) }, larger.after, {
        direction: 'lower', reason: `sequences stop being preempted for want of cache; ${speedChange({ gpu: deployment.gpu, gpus: deployment.gpusPerReplica }, { gpu: larger.gpu, gpus: larger.gpus }).latency.reason}`,
      });
    }
    const context = deployment.contextLength;
    if (context !== null && context >= 2048) {
      const shorter = Math.max(1024, Math.floor(context / 2 / 1024) * 1024);
      add('shorter-context', `Halve the context length to ${shorter} tokens: each sequence holds at most that much KV cache`, {
        names: ['kvCacheUsageMax', 'kvCacheUsageAvg', 'requestsWaitingMax'],
        reason: `the KV cache peaked at ${Math.round(kvMax * 100)}% full with sequences of up to ${context} tokens allowed`,
      }, { contextLength: shorter }, now, {
        direction: 'lower', reason: `a long sequence can take at most ${shorter} tokens of cache, so more sequences run at once instead of waiting; requests longer than ${shorter} tokens are refused`,
      });
    }
  }

  // Idle: nothing finished and nothing ran over the whole window.
  const idle = load.requestsPerSecond !== null && load.requestsPerSecond === 0 && (load.requestsRunningMax ?? 0) === 0 && !queued;
  if (idle) {
    const idleReason = `no request finished or ran in the last ${Math.round(load.windowSeconds / 60)} minutes on ${deployment.replicas} replica(s)`;
    const names: Array<keyof MeasuredLoad> = ['requestsPerSecond', 'requestsRunningMax', 'readyReplicasAvg'];
    // A number, not its literal: the bound of 0 is being made legal.
    if ((MIN_REPLICAS as number) === 0) {
      add('scale-to-zero', 'Scale to zero while idle: it wakes on its next request', { names, reason: idleReason }, { replicas: 0, minReplicas: 0 }, 0, {
        direction: 'higher', reason: 'the first request after an idle spell waits for a replica to start; the rest are served as today',
      });
    } else if (deployment.replicas > MIN_REPLICAS) {
      const change = { replicas: MIN_REPLICAS, ...(deployment.minReplicas > MIN_REPLICAS ? { minReplicas: MIN_REPLICAS } : {}) };
      add('fewer-replicas', `Keep ${MIN_REPLICAS} replica(s) while idle`, { names, reason: idleReason }, change, costOf({ ...deployment, replicas: MIN_REPLICAS }), {
        direction: 'unchanged', reason: 'no request was served in the window; one replica serves the next as soon as it comes',
      });
    }
  } else if (!queued && !latencyBreached && kvMax !== null && kvMax < KV_CACHE_PRESSURE && deployment.replicas > 1) {
    // Underused: the peak KV-cache use spread over fewer replicas stays at the target use.
    const floor = Math.max(1, MIN_REPLICAS);
    const replicas = Math.max(floor, Math.ceil((deployment.replicas * kvMax) / TARGET_KV_CACHE_USAGE));
    if (replicas < deployment.replicas) {
      add('fewer-replicas', `Remove ${deployment.replicas - replicas} replica(s): the load fits on ${replicas}`, {
        names: ['kvCacheUsageMax', 'kvCacheUsageAvg', 'requestsRunningMax', 'requestsWaitingMax', 'p95TimeToFirstTokenSeconds'],
        reason: `the KV cache peaked at ${Math.round(kvMax * 100)}% full across ${deployment.replicas} replicas and no request waited${targetTtft === null ? '' : '; p95 time to first token is within the target'}`,
      }, { replicas, ...(deployment.minReplicas > replicas ? { minReplicas: replicas } : {}) }, costOf({ ...deployment, replicas }), {
        direction: 'higher',
        reason: `each replica takes ${round(deployment.replicas / replicas, 2)}x today's load: its KV cache would peak near ${Math.round((kvMax * deployment.replicas * 100) / replicas)}% full`,
      });
    }
  }

  // A cheaper GPU type that fits with headroom: its KV cache holds today's peak use at the target use.
  if (!longQueue) {
    const kvNow = kvCacheGb(facts, deployment.gpu, deployment.gpusPerReplica, deployment.contextLength, deployment.dtype);
    // Without a measured peak, as much cache as now.
    const needed = kvNow === undefined ? undefined : (kvNow * (kvMax ?? TARGET_KV_CACHE_USAGE)) / TARGET_KV_CACHE_USAGE;
    const cheaper = alternatives.flatMap((a) => {
      if (!a.fits || !a.available || a.gpusPerReplica === null || a.hourlyCents === null || a.hourlyCents >= now) return [];
      const kv = kvCacheGb(facts, a.gpu, a.gpusPerReplica, deployment.contextLength, deployment.dtype);
      if (needed !== undefined && (kv === undefined || kv < needed)) return [];
      const speed = speedChange({ gpu: deployment.gpu, gpus: deployment.gpusPerReplica }, { gpu: a.gpu, gpus: a.gpusPerReplica });
      // A slower GPU is no choice while latency is above its target.
      if (latencyBreached && speed.latency.direction === 'higher') return [];
      return [{ ...a, gpusPerReplica: a.gpusPerReplica, hourlyCents: a.hourlyCents, kv, speed }];
    }).sort((a, b) => a.hourlyCents - b.hourlyCents)[0];
    if (cheaper) {
      add('cheaper-gpu', `Move to ${cheaper.gpusPerReplica} ${findGpuType(cheaper.gpu)!.name} per replica: it holds the model with headroom for less`, {
        names: ['kvCacheUsageMax', 'requestsWaitingMax', 'p95TimeToFirstTokenSeconds', 'generationTokensPerSecond'],
        reason: cheaper.kv === undefined
          ? `it gives each replica at least the GPU memory it has now (Kiln has no figures for this model)`
          : `its ${cheaper.kv} GB of KV cache a replica holds the peak use measured (${Math.round((kvMax ?? 0) * 100)}% of ${kvNow} GB) below ${TARGET_KV_CACHE_USAGE * 100}% full`,
      }, { gpu: cheaper.gpu, gpusPerReplica: cheaper.gpusPerReplica, ...(deployment.contextLength === null ? {} : { contextLength: deployment.contextLength }) }, cheaper.hourlyCents, cheaper.speed.latency);
    }
  }

  return out.sort((a, b) => RECOMMENDATION_KINDS.indexOf(a.kind) - RECOMMENDATION_KINDS.indexOf(b.kind));
}

/**
 * The recommendation auto-apply takes from `recommendations` (recommend's answer for the same load and
 * targets): the first of AUTO_APPLY_KINDS that saves cost; none while the measured p95 time to first token
 * is above the target, whatever the rules say.
 */
export function autoApplicable(recommendations: readonly Recommendation[], load: MeasuredLoad, targets: OptimizationTargets): Recommendation | undefined {
  const ttftMs = load.p95TimeToFirstTokenSeconds === null ? null : load.p95TimeToFirstTokenSeconds * 1000;
  if (targets.targetP95TimeToFirstTokenMs !== null && ttftMs !== null && ttftMs > targets.targetP95TimeToFirstTokenMs) return undefined;
  return recommendations.find((r) => (AUTO_APPLY_KINDS as readonly RecommendationKind[]).includes(r.kind) && r.effect.hourlyCentsChange < 0);
}
