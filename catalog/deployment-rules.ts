// Rules a deployment's configuration follows wherever it is checked: the API refuses a request that breaks
// one (422 naming the field, or 400 INVALID_MODEL) and the vllm-deployment stack refuses its arguments, from
// this one definition. Each check answers with what is wrong, so each side words its own error around it.

/** A deployment's name becomes its Service's name, hence a DNS label (RFC 1035): it starts with a letter. */
export const NAME_PATTERN = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The model references Kiln can load, as the API's INVALID_MODEL answer lists them. */
export const MODEL_SOURCES = ['huggingface:<org>/<model>', 'hf://<org>/<model>', 's3://<bucket>/<path>', 'gs://<bucket>/<path>'];
export const MAX_MODEL_LENGTH = 255;
const SEGMENT = '[A-Za-z0-9][A-Za-z0-9._-]*';
/** What isLoadableModel accepts (within MAX_MODEL_LENGTH), as the OpenAPI document describes `model` too. */
export const LOADABLE_MODEL = new RegExp(`^(?:(?:hf://)?${SEGMENT}/${SEGMENT}|(?:s3|gs)://[a-z0-9][a-z0-9.-]{1,62}/[^\\s]+)$`);

/** One of MODEL_SOURCES; vLLM gets it as a single argument, so it never holds white space. */
export function isLoadableModel(model: string): boolean {
  return model.length <= MAX_MODEL_LENGTH && LOADABLE_MODEL.test(model);
}

/** The autoscaler keeps at least one replica (a bound of 0 is refused); more than this is not one deployment's to take. */
export const MIN_REPLICAS = 1;
export const MAX_REPLICAS = 100;

export interface ReplicaBounds {
  readonly replicas: number;
  readonly minReplicas: number;
  readonly maxReplicas: number;
}

/** Each count a whole number in [MIN_REPLICAS, MAX_REPLICAS], and minReplicas <= replicas <= maxReplicas; undefined when they are. */
export function replicaBoundsProblem(bounds: ReplicaBounds): string | undefined {
  const { replicas, minReplicas, maxReplicas } = bounds;
  for (const [field, value] of Object.entries(bounds)) {
    if (!Number.isInteger(value) || value < MIN_REPLICAS) return `${field} must be a whole number of at least ${MIN_REPLICAS}, got ${value}`;
    if (value > MAX_REPLICAS) return `${field} must be at most ${MAX_REPLICAS}, got ${value}`;
  }
  if (minReplicas > maxReplicas) return `minReplicas (${minReplicas}) is greater than maxReplicas (${maxReplicas})`;
  if (replicas < minReplicas || replicas > maxReplicas) {
    return `replicas (${replicas}) must lie between minReplicas (${minReplicas}) and maxReplicas (${maxReplicas})`;
  }
  return undefined;
}

/** The most GPUs vLLM can split one replica over here: one node's worth (8 on p5 / p4de machines). */
export const MAX_GPUS_PER_REPLICA = 8;

/** Tensor parallelism splits attention heads evenly, so vLLM wants a power of two, within one node. */
export function isValidGpusPerReplica(gpus: number): boolean {
  return Number.isInteger(gpus) && gpus >= 1 && gpus <= MAX_GPUS_PER_REPLICA && (gpus & (gpus - 1)) === 0;
}

/** Every count isValidGpusPerReplica accepts, smallest first. */
export const GPUS_PER_REPLICA_CHOICES = Array.from({ length: MAX_GPUS_PER_REPLICA }, (_, i) => i + 1).filter(isValidGpusPerReplica);
