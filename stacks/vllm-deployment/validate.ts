// Rules the vLLM deployment's arguments must follow (those of catalog/deployment-rules.ts, which the API applies
// too), as small pure functions throwing StackArgsError, so the worker can check a request before running Pulumi
// (a broken rule is not worth retrying) and tests can check each rule on its own.
import {
  DTYPES, isLoadableModel, isValidGpusPerReplica, MAX_CONTEXT_LENGTH, MAX_GPUS_PER_REPLICA, MODEL_SOURCES, NAME_PATTERN, replicaBoundsProblem,
  vllmArgsProblem, type ReplicaBounds,
} from '../../catalog/deployment-rules.ts';
import { findGpuType, GPU_TYPE_IDS } from '../../catalog/gpu-types.ts';
import { StackArgsError } from '../args-error.ts';

export function checkName(name: string): string {
  if (!NAME_PATTERN.test(name)) {
    throw new StackArgsError(`name "${name}" must be a DNS label: lowercase letters, digits and '-', starting with a letter, at most 63 characters`);
  }
  return name;
}

export function checkModel(model: string): string {
  if (!isLoadableModel(model)) throw new StackArgsError(`model "${model}" must be a non-empty id Kiln can load: one of ${MODEL_SOURCES.join(', ')}`);
  return model;
}

export function checkGpuType(gpuType: string): string {
  if (!findGpuType(gpuType)) {
    throw new StackArgsError(`unknown GPU type "${gpuType}"; known types: ${GPU_TYPE_IDS.join(', ')}`);
  }
  return gpuType;
}

export function checkGpusPerReplica(gpus: number): number {
  if (!isValidGpusPerReplica(gpus)) {
    throw new StackArgsError(`gpusPerReplica must be a power of two from 1 to ${MAX_GPUS_PER_REPLICA}, got ${gpus}`);
  }
  return gpus;
}

export function checkReplicaBounds(bounds: ReplicaBounds): ReplicaBounds {
  const problem = replicaBoundsProblem(bounds);
  if (problem) throw new StackArgsError(problem);
  return bounds;
}

export function checkMaxModelLen(tokens: number): number {
  if (!Number.isInteger(tokens) || tokens < 1 || tokens > MAX_CONTEXT_LENGTH) {
    throw new StackArgsError(`maxModelLen must be a whole number of tokens from 1 to ${MAX_CONTEXT_LENGTH}, got ${tokens}`);
  }
  return tokens;
}

export function checkDtype(dtype: string): string {
  if (!(DTYPES as readonly string[]).includes(dtype)) throw new StackArgsError(`dtype must be one of ${DTYPES.join(', ')}, got "${dtype}"`);
  return dtype;
}

export function checkExtraArgs(args: readonly string[]): readonly string[] {
  const problem = vllmArgsProblem(args);
  if (problem) throw new StackArgsError(`extraArgs: ${problem}`);
  return args;
}

/** An environment variable's name, as the container's secret variables are named. */
export function checkEnvName(variable: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) throw new StackArgsError(`secret variable "${variable}" must be an environment variable name: letters, digits and '_', not starting with a digit`);
  return variable;
}
