// The GPU catalog: the GPU types Kiln can place a deployment on. Plain data, read by the control plane
// (validation, pricing, GET /v1/gpu-types), the stacks (node selection) and the local cluster (kwok nodes).

export interface GpuType {
  /** Id used in the API (`gpu` field) and as the value of the node label below. */
  readonly id: string;
  readonly name: string;
  readonly vendor: 'nvidia';
  /** Memory per GPU, GiB. */
  readonly memoryGb: number;
  /** Memory bandwidth, GB/s (the vendor's figure): what bounds how fast a model decodes. */
  readonly memoryBandwidthGBps: number;
  /** On-demand price per GPU-hour, USD. */
  readonly hourlyPriceUsd: number;
}

/** Label every GPU node carries with its catalog id; the vLLM stack selects nodes by it. */
export const GPU_TYPE_LABEL = 'kiln.dev/gpu-type';
/** Extended resource a GPU node advertises (the NVIDIA device plugin's name). */
export const GPU_RESOURCE = 'nvidia.com/gpu';
/** Taint GPU nodes carry so that only pods asking for GPUs land on them. */
export const GPU_TAINT = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' } as const;

export const GPU_TYPES: readonly GpuType[] = [
  { id: 'nvidia-h100-80gb', name: 'NVIDIA H100 80GB', vendor: 'nvidia', memoryGb: 80, memoryBandwidthGBps: 3350, hourlyPriceUsd: 4.5 },
  { id: 'nvidia-a100-80gb', name: 'NVIDIA A100 80GB', vendor: 'nvidia', memoryGb: 80, memoryBandwidthGBps: 2039, hourlyPriceUsd: 2.8 },
  { id: 'nvidia-a10g', name: 'NVIDIA A10G 24GB', vendor: 'nvidia', memoryGb: 24, memoryBandwidthGBps: 600, hourlyPriceUsd: 1.2 },
  { id: 'nvidia-l4', name: 'NVIDIA L4 24GB', vendor: 'nvidia', memoryGb: 24, memoryBandwidthGBps: 300, hourlyPriceUsd: 0.8 },
  { id: 'nvidia-t4', name: 'NVIDIA T4 16GB', vendor: 'nvidia', memoryGb: 16, memoryBandwidthGBps: 320, hourlyPriceUsd: 0.53 },
];

/** The catalog's ids, non-empty (as an enum of them needs). */
export const GPU_TYPE_IDS = GPU_TYPES.map((g) => g.id) as [string, ...string[]];

export function findGpuType(id: string): GpuType | undefined {
  return GPU_TYPES.find((g) => g.id === id);
}

/** The GPUs a deployment holds: `replicas` replicas of `gpusPerReplica` GPUs of type `gpu`. */
export interface Capacity { readonly gpu: string; readonly replicas: number; readonly gpusPerReplica: number }

/** What those GPUs cost per hour in cents, unrounded; `replicas` may be fractional (replica-hours). */
export function exactHourlyCents(capacity: Capacity): number {
  return findGpuType(capacity.gpu)!.hourlyPriceUsd * 100 * capacity.replicas * capacity.gpusPerReplica;
}

/** The same in whole cents, rounded up. */
export function hourlyCents(capacity: Capacity): number {
  return Math.ceil(exactHourlyCents(capacity));
}

/** What `replicaHours` of a deployment's replicas cost, in cents: an hour of that many replicas. */
export function spentCents(d: Omit<Capacity, 'replicas'>, replicaHours: number): number {
  return hourlyCents({ gpu: d.gpu, gpusPerReplica: d.gpusPerReplica, replicas: replicaHours });
}

/** Spent so far plus the rest of the period (from `at` to `end`) at `hourlyCentsNow`: a period's projection. */
export function projectedCents(spent: number, hourlyCentsNow: number, at: Date, end: Date): number {
  return spent + Math.ceil(hourlyCentsNow * (Math.max(0, end.getTime() - at.getTime()) / 3_600_000));
}

/** Deployment statuses in which a deployment holds its GPUs (and is paid for). */
const HOLDING_STATUSES: ReadonlySet<string> = new Set(['deploying', 'running', 'scaling', 'updating']);

export function holdsGpus(status: string): boolean {
  return HOLDING_STATUSES.has(status);
}
