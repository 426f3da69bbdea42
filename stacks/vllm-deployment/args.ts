// What a vLLM deployment is made of: the component's arguments and their resolved, checked form.
import * as pulumi from '@pulumi/pulumi';
import { vllmModelSource } from '../../catalog/deployment-rules.ts';
import { VLLM_PORT } from '../../catalog/model-server.ts';
import { checkDtype, checkEnvName, checkExtraArgs, checkGpusPerReplica, checkGpuType, checkMaxModelLen, checkModel, checkName, checkReplicaBounds } from './validate.ts';
import { StackArgsError } from '../args-error.ts';

/** vLLM's OpenAI-compatible server image, pinned so a re-run never changes the server under a deployment. */
export const DEFAULT_VLLM_IMAGE = 'vllm/vllm-openai:v0.11.0';
/** Room for the weights of a 70B model in 16-bit precision, plus headroom. */
export const DEFAULT_MODEL_CACHE_SIZE = '200Gi';

export interface VllmDeploymentArgs {
  /** Name of the Kubernetes objects (Deployment, Service, autoscaler, disruption budget); a DNS label. */
  readonly name: pulumi.Input<string>;
  /** Namespace the objects live in; `default` when absent. */
  readonly namespace?: pulumi.Input<string>;
  /** Model vLLM serves: a Hugging Face id such as `meta-llama/Llama-3.1-8B-Instruct`. */
  readonly model: pulumi.Input<string>;
  /** GPU catalog id (catalog/gpu-types.ts); pods only land on nodes labelled with it. */
  readonly gpuType: pulumi.Input<string>;
  /** GPUs per pod, also vLLM's tensor-parallel size: 1, 2, 4 or 8. */
  readonly gpusPerReplica: pulumi.Input<number>;
  /** Desired number of pods. */
  readonly replicas: pulumi.Input<number>;
  /** Fewest pods the autoscaler keeps; `replicas` when absent. */
  readonly minReplicas?: pulumi.Input<number>;
  /** Most pods the autoscaler runs; `replicas` when absent. */
  readonly maxReplicas?: pulumi.Input<number>;
  /** vLLM `--max-model-len`: longest context served; vLLM derives it from the model when absent. */
  readonly maxModelLen?: pulumi.Input<number>;
  /** vLLM `--dtype`, e.g. `auto`, `bfloat16`, `float16`. */
  readonly dtype?: pulumi.Input<string>;
  /** Further vLLM server flags, appended as given, e.g. `["--enable-prefix-caching"]`. */
  readonly extraArgs?: pulumi.Input<pulumi.Input<string>[]>;
  /** Server image; DEFAULT_VLLM_IMAGE when absent. */
  readonly image?: pulumi.Input<string>;
  /** Size limit of the model cache volume (Kubernetes quantity); DEFAULT_MODEL_CACHE_SIZE when absent. */
  readonly modelCacheSize?: pulumi.Input<string>;
  /**
   * true: a HorizontalPodAutoscaler on vLLM's queue owns the replica count between the bounds (it needs a custom
   * metrics adapter such as prometheus-adapter): a new Deployment starts at `minReplicas`, one switched to it keeps
   * the replicas it runs, and later applies leave the count to the autoscaler. false (the
   * default, and what Kiln runs): whoever runs the stack sets `replicas`; Kiln scales through its workflow.
   */
  readonly horizontalPodAutoscaler?: boolean;
  /** Annotations of the pod template; changing one rolls the pods (Kiln's restart raises `kiln.dev/restarts`). */
  readonly podAnnotations?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /**
   * Environment variables whose values are secrets (a Hugging Face token as `HF_TOKEN`): kept in a Kubernetes
   * Secret `<name>-secrets` in the namespace, which the container reads them from. The names are plain; give
   * the values as `pulumi.secret(...)` so the stack's state keeps them encrypted.
   */
  readonly secretEnv?: Readonly<Record<string, pulumi.Input<string>>>;
}

/** The arguments once known, defaults applied and every rule checked. */
export interface VllmSpec {
  readonly name: string;
  readonly namespace: string;
  readonly model: string;
  readonly gpuType: string;
  readonly gpusPerReplica: number;
  readonly replicas: number;
  readonly minReplicas: number;
  readonly maxReplicas: number;
  readonly serverArgs: string[];
  /** The PersistentVolumeClaim a pvc:// model is read from, and where the container mounts it. */
  readonly modelClaim: { readonly name: string; readonly mountPath: string } | undefined;
  readonly image: string;
  readonly modelCacheSize: string;
  readonly podAnnotations: Record<string, string>;
  readonly horizontalPodAutoscaler: boolean;
}

const isKnown = <T>(value: pulumi.Input<T>): value is T => !pulumi.Output.isInstance(value) && !(value instanceof Promise);

/**
 * Checks every rule whose arguments are plain values already, so a broken rule fails construction with a clear
 * error; vllmSpec checks the rest when they resolve.
 */
export function checkKnownArgs(args: VllmDeploymentArgs): void {
  if (isKnown(args.name)) checkName(args.name);
  if (isKnown(args.model)) checkModel(args.model);
  if (isKnown(args.gpuType)) checkGpuType(args.gpuType);
  if (isKnown(args.gpusPerReplica)) checkGpusPerReplica(args.gpusPerReplica);
  for (const variable of Object.keys(args.secretEnv ?? {})) checkEnvName(variable);
  const { replicas, minReplicas = replicas } = args;
  const maxReplicas = args.maxReplicas ?? (isKnown(replicas) ? Math.max(1, replicas) : replicas);
  if (isKnown(replicas) && isKnown(minReplicas) && isKnown(maxReplicas)) checkReplicaBounds({ replicas, minReplicas, maxReplicas });
}

export function vllmSpec(args: pulumi.Unwrap<VllmDeploymentArgs>): VllmSpec {
  const gpusPerReplica = checkGpusPerReplica(args.gpusPerReplica);
  const source = vllmModelSource(checkModel(args.model));
  const bounds = checkReplicaBounds({
    replicas: args.replicas,
    minReplicas: args.minReplicas ?? args.replicas,
    maxReplicas: args.maxReplicas ?? Math.max(1, args.replicas),
  });
  // Kubernetes' HorizontalPodAutoscaler cannot scale to zero (HPAScaleToZero is an alpha feature gate).
  if (args.horizontalPodAutoscaler && bounds.minReplicas < 1) throw new StackArgsError('minReplicas must be at least 1 with horizontalPodAutoscaler (it cannot scale to zero)');
  return {
    name: checkName(args.name),
    namespace: args.namespace ?? 'default',
    model: args.model,
    gpuType: checkGpuType(args.gpuType),
    gpusPerReplica,
    ...bounds,
    serverArgs: [
      ...source.args,
      '--tensor-parallel-size', String(gpusPerReplica),
      '--port', String(VLLM_PORT),
      ...(args.maxModelLen === undefined ? [] : ['--max-model-len', String(checkMaxModelLen(args.maxModelLen))]),
      ...(args.dtype === undefined ? [] : ['--dtype', checkDtype(args.dtype)]),
      ...checkExtraArgs(args.extraArgs ?? []),
    ],
    modelClaim: source.claim,
    image: args.image ?? DEFAULT_VLLM_IMAGE,
    modelCacheSize: args.modelCacheSize ?? DEFAULT_MODEL_CACHE_SIZE,
    podAnnotations: args.podAnnotations ?? {},
    horizontalPodAutoscaler: args.horizontalPodAutoscaler ?? false,
  };
}
