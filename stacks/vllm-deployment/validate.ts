// Rules the vLLM deployment's arguments must follow, as small pure functions so the worker can check a request
// before running Pulumi (a broken rule is not worth retrying) and tests can check each rule on its own.
import { NAME_PATTERN } from '../../catalog/deployment-rules.ts';
import { findGpuType, GPU_TYPES } from '../../catalog/gpu-types.ts';
import { StackArgsError } from '../args-error.ts';

/** The most GPUs vLLM can split one replica over here: one node's worth (8 on p5 / p4de machines). */
export const MAX_GPUS_PER_REPLICA = 8;


export function checkName(name: string): string {
  if (!NAME_PATTERN.test(name)) {
    throw new StackArgsError(`name "${name}" must be a DNS label: lowercase letters, digits and '-', starting with a letter, at most 63 characters`);
  }
  return name;
}

/** The model id is handed to vLLM as one argument. */
export function checkModel(model: string): string {
  if (!/^\S+$/.test(model)) throw new StackArgsError(`model "${model}" must be a non-empty id without spaces`);
  return model;
}

export function checkGpuType(gpuType: string): string {
  if (!findGpuType(gpuType)) {
    throw new StackArgsError(`unknown GPU type "${gpuType}"; known types: ${GPU_TYPES.map((g) => g.id).join(', ')}`);
  }
  return gpuType;
}

/** Tensor parallelism splits attention heads evenly, so vLLM wants a power of two. */
export function checkGpusPerReplica(gpus: number): number {
  if (!Number.isInteger(gpus) || gpus < 1 || gpus > MAX_GPUS_PER_REPLICA || (gpus & (gpus - 1)) !== 0) {
    throw new StackArgsError(`gpusPerReplica must be a power of two from 1 to ${MAX_GPUS_PER_REPLICA}, got ${gpus}`);
  }
  return gpus;
}

export interface ReplicaBounds {
  readonly replicas: number;
  readonly minReplicas: number;
  readonly maxReplicas: number;
}

/** The autoscaler needs at least one replica and the desired count inside its bounds. */
export function checkReplicaBounds(bounds: ReplicaBounds): ReplicaBounds {
  const { replicas, minReplicas, maxReplicas } = bounds;
  for (const [field, value] of Object.entries(bounds)) {
    if (!Number.isInteger(value) || value < 1) throw new StackArgsError(`${field} must be a whole number of at least 1, got ${value}`);
  }
  if (minReplicas > maxReplicas) throw new StackArgsError(`minReplicas (${minReplicas}) is greater than maxReplicas (${maxReplicas})`);
  if (replicas < minReplicas || replicas > maxReplicas) {
    throw new StackArgsError(`replicas (${replicas}) must lie between minReplicas (${minReplicas}) and maxReplicas (${maxReplicas})`);
  }
  return bounds;
}
