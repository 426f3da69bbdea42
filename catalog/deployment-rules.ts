// Rules a deployment's configuration follows wherever it is checked: the API refuses a request that breaks
// one (422 naming the field, or 400 INVALID_MODEL) and the vllm-deployment stack refuses its arguments, from
// this one definition. Each check answers with what is wrong, so each side words its own error around it.

/** A deployment's name becomes its Service's name, hence a DNS label (RFC 1035): it starts with a letter. */
export const NAME_PATTERN = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The model references Kiln can load, as the API's INVALID_MODEL answer lists them. */
export const MODEL_SOURCES = [
  '<org>/<model>[@<revision>]', 'hf://<org>/<model>[@<revision>]', 's3://<bucket>/<path>', 'gs://<bucket>/<path>', 'pvc://<claim>/<path>',
];
export const MAX_MODEL_LENGTH = 255;
const SEGMENT = '[A-Za-z0-9][A-Za-z0-9._-]*';
// A branch, tag or commit of the Hub repository (branches may hold '/', as refs/pr/1 does).
const REVISION = '[A-Za-z0-9][A-Za-z0-9._/-]*';
// A PersistentVolumeClaim's name (a DNS subdomain) and a path inside it that never climbs out of it ('..').
const CLAIM = '[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?';
const CLAIM_PATH = '(?!(?:[^\\s/]*/)*\\.\\.(?:/|$))[^\\s]+';
/** What isLoadableModel accepts (within MAX_MODEL_LENGTH), as the OpenAPI document describes `model` too. */
export const LOADABLE_MODEL = new RegExp(
  `^(?:(?:hf://)?${SEGMENT}/${SEGMENT}(?:@${REVISION})?|(?:s3|gs)://[a-z0-9][a-z0-9.-]{1,62}/[^\\s]+|pvc://${CLAIM}/${CLAIM_PATH})$`,
);

/** One of MODEL_SOURCES; vLLM gets it as a single argument, so it never holds white space. */
export function isLoadableModel(model: string): boolean {
  return model.length <= MAX_MODEL_LENGTH && LOADABLE_MODEL.test(model);
}

/** A loadable reference taken apart: what to ask the Hub for, or which storage holds the weights. */
export type ModelReference =
  | { readonly kind: 'huggingface'; readonly repo: string; readonly revision?: string }
  | { readonly kind: 's3' | 'gs'; readonly bucket: string; readonly path: string }
  | { readonly kind: 'pvc'; readonly claim: string; readonly path: string };

/** The parts of a reference isLoadableModel accepts; undefined for any other string. */
export function parseModelReference(model: string): ModelReference | undefined {
  if (!isLoadableModel(model)) return undefined;
  const storage = /^(s3|gs|pvc):\/\/([^/]+)\/(.+)$/.exec(model);
  if (storage) {
    const [, kind, where, path] = storage as unknown as [string, 's3' | 'gs' | 'pvc', string, string];
    return kind === 'pvc' ? { kind, claim: where, path } : { kind, bucket: where, path };
  }
  const [repo, revision] = model.replace(/^hf:\/\//, '').split('@') as [string, string?];
  return revision === undefined ? { kind: 'huggingface', repo } : { kind: 'huggingface', repo, revision };
}

/** Where the model server mounts a PersistentVolumeClaim a pvc:// model lives in (read-only), under the claim's name. */
export const PVC_MODEL_ROOT = '/models';

/** How vLLM loads a model: its `--model` (and `--revision`) arguments, and the claim to mount for a pvc:// one. */
export interface VllmModelSource {
  readonly args: readonly string[];
  readonly claim?: { readonly name: string; readonly mountPath: string };
}

/**
 * vLLM takes a Hub id with its revision as a separate flag (hf:// is Kiln's, not vLLM's), a pvc:// model as a
 * path in the claim mounted at PVC_MODEL_ROOT/<claim>, and s3:// and gs:// locations as they are. When what
 * vLLM loads is not the reference as written, it still serves the model under that reference
 * (--served-model-name), the name inference requests carry.
 */
export function vllmModelSource(model: string): VllmModelSource {
  const reference = parseModelReference(model);
  const servedAs = (loaded: string) => (loaded === model ? [] : ['--served-model-name', model]);
  if (reference?.kind === 'huggingface') {
    return { args: ['--model', reference.repo, ...(reference.revision ? ['--revision', reference.revision] : []), ...servedAs(reference.repo)] };
  }
  if (reference?.kind === 'pvc') {
    const mountPath = `${PVC_MODEL_ROOT}/${reference.claim}`;
    const path = `${mountPath}/${reference.path}`;
    return { args: ['--model', path, ...servedAs(path)], claim: { name: reference.claim, mountPath } };
  }
  return { args: ['--model', model] };
}

/**
 * Replica bounds: minReplicas 0 lets an idle deployment scale to zero (it wakes on its first request,
 * catalog/autoscaling.ts); maxReplicas is at least one; more than MAX_REPLICAS is not one deployment's to take.
 */
export const MIN_REPLICAS = 0;
export const MAX_REPLICAS = 100;
/** Replicas a new deployment starts with when the request names none (at least minReplicas). */
export const DEFAULT_REPLICAS = 1;

export interface ReplicaBounds {
  readonly replicas: number;
  readonly minReplicas: number;
  readonly maxReplicas: number;
}

/** Each count a whole number in [MIN_REPLICAS, MAX_REPLICAS], maxReplicas at least 1, and minReplicas <= replicas <= maxReplicas; undefined when they are. */
export function replicaBoundsProblem(bounds: ReplicaBounds): string | undefined {
  const { replicas, minReplicas, maxReplicas } = bounds;
  for (const [field, value] of Object.entries(bounds)) {
    if (!Number.isInteger(value) || value < MIN_REPLICAS) return `${field} must be a whole number of at least ${MIN_REPLICAS}, got ${value}`;
    if (value > MAX_REPLICAS) return `${field} must be at most ${MAX_REPLICAS}, got ${value}`;
  }
  if (maxReplicas < 1) return `maxReplicas must be at least 1, got ${maxReplicas}`;
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

/** vLLM `--dtype`: `auto` takes the checkpoint's own 16-bit type (a float32 checkpoint is cast to 16 bits). */
export const DTYPES = ['auto', 'bfloat16', 'float16', 'float32'] as const;
export type Dtype = (typeof DTYPES)[number];

/** The longest context (vLLM `--max-model-len`) a deployment may ask for: beyond any model's own. */
export const MAX_CONTEXT_LENGTH = 10_000_000;

/** Flags Kiln sets from the deployment's own fields: given again in vllmArgs they would contradict them. */
export const MANAGED_VLLM_FLAGS = ['--model', '--revision', '--port', '--host', '--tensor-parallel-size', '--max-model-len', '--dtype', '--served-model-name'] as const;
export const MAX_VLLM_ARGS = 32;
const VLLM_ARG = /^[^\s]{1,256}$/;

/** Extra vLLM server arguments, each one token without white space, none of MANAGED_VLLM_FLAGS; undefined when they are. */
export function vllmArgsProblem(args: readonly string[]): string | undefined {
  if (args.length > MAX_VLLM_ARGS) return `at most ${MAX_VLLM_ARGS} arguments, got ${args.length}`;
  const malformed = args.find((arg) => !VLLM_ARG.test(arg));
  if (malformed !== undefined) return `each argument is one token of 1 to 256 characters without white space, got ${JSON.stringify(malformed)}`;
  const managed = args.find((arg) => (MANAGED_VLLM_FLAGS as readonly string[]).includes(arg.split('=')[0]!));
  if (managed !== undefined) return `${managed.split('=')[0]} is set by Kiln from the deployment's own fields`;
  return undefined;
}
