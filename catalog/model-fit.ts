// Whether a model fits the GPUs of one replica, worked out the way vLLM sizes its memory: it takes a share of
// each GPU (gpu_memory_utilization), loads the weights, keeps some for activations and CUDA graphs, and
// gives the rest to the KV cache. A replica serves only if one sequence of the full context length fits in
// that cache. Plain arithmetic, read by the API (model details, validation, deployment checks) and the
// dry run, so every side reports the same figures.
import { GPUS_PER_REPLICA_CHOICES, type Dtype } from './deployment-rules.ts';
import type { GpuType } from './gpu-types.ts';
import type { CatalogModel } from './models.ts';

/** vLLM's default `--gpu-memory-utilization`: the share of each GPU's memory it takes. */
export const GPU_MEMORY_UTILIZATION = 0.9;
/** Held back on each GPU for activations, CUDA graphs and the runtime (what vLLM's profiling run finds for 1-70B models). */
export const RUNTIME_OVERHEAD_GIB_PER_GPU = 1.5;

const GIB = 1024 ** 3;

/**
 * Bytes per weight and per KV cache element: vLLM serves in 16 bits, a float32 checkpoint included (its
 * `--dtype auto` casts one to the platform's 16-bit type); only `--dtype float32` asked for takes 4.
 */
export const BYTES_PER_VALUE = 2;
const bytesPerValue = (dtype: Dtype | undefined) => (dtype === 'float32' ? 4 : BYTES_PER_VALUE);

/** Share of a GPU's memory bandwidth one decoding sequence achieves, low and high (decoding reads every weight per token). */
const BANDWIDTH_EFFICIENCY = [0.5, 0.8] as const;

export type ModelShape = Pick<CatalogModel, 'parametersBillion' | 'layers' | 'kvHeads' | 'headSize'>;

export interface FitInput {
  readonly model: ModelShape;
  readonly gpu: Pick<GpuType, 'memoryGb'>;
  readonly gpuCount: number;
  /** Tokens of one sequence (vLLM's max_model_len). */
  readonly contextLength: number;
  /** vLLM `--dtype`; `auto` (16 bits) when absent. */
  readonly dtype?: Dtype | undefined;
}

/** The arithmetic, in GiB, with what it means for serving. */
export interface FitReport {
  readonly fits: boolean;
  /** Memory vLLM takes on the replica's GPUs: memory x count x GPU_MEMORY_UTILIZATION. */
  readonly usableGb: number;
  readonly weightsGb: number;
  readonly overheadGb: number;
  /** What is left for the KV cache (may be negative: the weights alone do not fit). */
  readonly kvCacheGb: number;
  /** KV cache one sequence of contextLength tokens takes: 2 (K and V) x layers x KV heads x head size x bytes x tokens. */
  readonly kvPerSequenceGb: number;
  /** Sequences of the full context length served at once; 0 when it does not fit. */
  readonly maxConcurrentSequences: number;
}

const round = (gib: number) => Math.round(gib * 100) / 100;

export function kvBytesPerToken(model: ModelShape, dtype?: Dtype): number {
  return 2 * model.layers * model.kvHeads * model.headSize * bytesPerValue(dtype);
}

const weightBytes = (model: ModelShape, dtype?: Dtype) => model.parametersBillion * 1e9 * bytesPerValue(dtype);

/** GiB left for the KV cache on `gpuCount` GPUs once the weights and runtime are in (negative: the weights do not fit). */
function kvCacheGib(model: ModelShape, gpu: Pick<GpuType, 'memoryGb'>, gpuCount: number, dtype?: Dtype): number {
  return gpu.memoryGb * gpuCount * GPU_MEMORY_UTILIZATION - weightBytes(model, dtype) / GIB - RUNTIME_OVERHEAD_GIB_PER_GPU * gpuCount;
}

export function modelFit({ model, gpu, gpuCount, contextLength, dtype }: FitInput): FitReport {
  const usable = gpu.memoryGb * gpuCount * GPU_MEMORY_UTILIZATION;
  const weights = weightBytes(model, dtype) / GIB;
  const overhead = RUNTIME_OVERHEAD_GIB_PER_GPU * gpuCount;
  const kvCache = kvCacheGib(model, gpu, gpuCount, dtype);
  const kvPerSequence = (kvBytesPerToken(model, dtype) * contextLength) / GIB;
  const maxConcurrentSequences = kvCache > 0 ? Math.floor(kvCache / kvPerSequence) : 0;
  return {
    fits: maxConcurrentSequences >= 1,
    usableGb: round(usable),
    weightsGb: round(weights),
    overheadGb: round(overhead),
    kvCacheGb: round(kvCache),
    kvPerSequenceGb: round(kvPerSequence),
    maxConcurrentSequences,
  };
}

/** The fewest GPUs of one type a replica needs at this context length, or undefined when 8 are not enough. */
export function smallestGpuCount(model: ModelShape, gpu: Pick<GpuType, 'memoryGb'>, contextLength: number, dtype?: Dtype): number | undefined {
  return GPUS_PER_REPLICA_CHOICES.find((gpuCount) => modelFit({ model, gpu, gpuCount, contextLength, dtype }).fits);
}

/** The longest context one sequence of which fits `gpuCount` GPUs: a multiple of 1024 tokens from 1024 up; 0 when none does. */
export function longestFittingContext(model: ModelShape, gpu: Pick<GpuType, 'memoryGb'>, gpuCount: number, dtype?: Dtype): number {
  const tokens = Math.floor((kvCacheGib(model, gpu, gpuCount, dtype) * GIB) / kvBytesPerToken(model, dtype));
  return tokens >= 1024 ? Math.floor(tokens / 1024) * 1024 : 0;
}

/** A deployment asks for a context long enough to be useful when it leaves the length to Kiln: this, or the model's own if shorter. */
export const DEFAULT_MIN_CONTEXT = 4096;

export interface PlacementRequest {
  readonly gpusPerReplica?: number | undefined;
  readonly contextLength?: number | undefined;
  readonly dtype?: Dtype | undefined;
}

export type PlacementChoice =
  | { readonly gpusPerReplica: number; readonly contextLength: number; readonly fit: FitReport }
  | { readonly problem: { readonly field: 'gpusPerReplica' | 'contextLength'; readonly message: string } };

/**
 * What a deployment of `model` on `gpu` runs with, the way creation and the dry run settle it: GPUs per
 * replica left out are the fewest that hold a sequence of the asked (or DEFAULT_MIN_CONTEXT) length; a context
 * length left out is the longest those GPUs hold, up to the model's own. What cannot fit is a problem naming
 * the field to change, with the arithmetic.
 */
export function choosePlacement(model: ModelShape & { readonly id: string; readonly contextLength: number }, gpu: GpuType, want: PlacementRequest): PlacementChoice {
  if (want.contextLength !== undefined && want.contextLength > model.contextLength) {
    return { problem: { field: 'contextLength', message: `${want.contextLength} tokens exceeds ${model.id}'s context length of ${model.contextLength}` } };
  }
  const sizing = want.contextLength ?? Math.min(DEFAULT_MIN_CONTEXT, model.contextLength);
  const gpusPerReplica = want.gpusPerReplica ?? smallestGpuCount(model, gpu, sizing, want.dtype);
  if (gpusPerReplica === undefined) {
    const most = GPUS_PER_REPLICA_CHOICES.at(-1)!;
    const fit = modelFit({ model, gpu, gpuCount: most, contextLength: sizing, dtype: want.dtype });
    return { problem: { field: 'gpusPerReplica', message: `${model.id} does not fit even ${most} ${gpu.name}: ${describeFit(fit, { gpuCount: most, contextLength: sizing })}` } };
  }
  const contextLength = want.contextLength ?? Math.min(model.contextLength, longestFittingContext(model, gpu, gpusPerReplica, want.dtype));
  const fit = modelFit({ model, gpu, gpuCount: gpusPerReplica, contextLength: Math.max(contextLength, 1), dtype: want.dtype });
  if (contextLength < 1 || !fit.fits) {
    const field = fit.kvCacheGb <= 0 || want.contextLength === undefined ? 'gpusPerReplica' : 'contextLength';
    return { problem: { field, message: `${model.id} on ${gpu.name}: ${describeFit(fit, { gpuCount: gpusPerReplica, contextLength: Math.max(contextLength, 1) })}` } };
  }
  return { gpusPerReplica, contextLength, fit };
}

/** One line a person can check: the figures behind a fit answer. */
export function describeFit(report: FitReport, input: Pick<FitInput, 'gpuCount' | 'contextLength'>): string {
  const verdict = report.fits
    ? `fits: ${report.maxConcurrentSequences} sequence(s) of ${input.contextLength} tokens at once`
    : report.kvCacheGb <= 0 ? 'does not fit: the weights alone exceed the usable memory' : `does not fit: one sequence of ${input.contextLength} tokens needs more KV cache than is left`;
  return `${input.gpuCount} GPU(s) give ${report.usableGb} GB usable (${GPU_MEMORY_UTILIZATION * 100}%); weights ${report.weightsGb} GB, `
    + `runtime ${report.overheadGb} GB, KV cache ${report.kvCacheGb} GB at ${report.kvPerSequenceGb} GB per sequence: ${verdict}`;
}

/**
 * Tokens a second one sequence decodes, as a [low, high] band: decoding is bound by memory bandwidth, each
 * token reading every weight once, spread over the replica's GPUs.
 */
export function decodeTokensPerSecond(model: ModelShape, gpu: Pick<GpuType, 'memoryBandwidthGBps'>, gpuCount: number): [number, number] {
  const [low, high] = BANDWIDTH_EFFICIENCY.map((share) => Math.round((gpu.memoryBandwidthGBps * 1e9 * gpuCount * share) / weightBytes(model)));
  return [low!, high!];
}
