// A model served by vLLM's OpenAI-compatible server on Kubernetes GPU nodes of one catalog type.
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { GPU_RESOURCE, GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import { modelServerLabels, serviceUrl, VLLM_PORT, VLLM_PORT_NAME } from '../../catalog/model-server.ts';
import { KILN_OBJECT_ANNOTATIONS } from '../kiln-objects.ts';
import { checkKnownArgs, vllmSpec, type VllmDeploymentArgs, type VllmSpec } from './args.ts';

// These let the worker check a request before it runs Pulumi.
export { checkKnownArgs, vllmSpec, DEFAULT_VLLM_IMAGE, type VllmDeploymentArgs, type VllmSpec } from './args.ts';
export * from './validate.ts';
export { StackArgsError } from '../args-error.ts';

/** Queue length per pod above which the autoscaler adds pods (vLLM's `vllm:num_requests_waiting`). */
const TARGET_REQUESTS_WAITING = '5';

export class VllmDeployment extends pulumi.ComponentResource {
  /** In-cluster URL of the OpenAI-compatible API, e.g. `http://llama.models.svc.cluster.local`. */
  readonly serviceUrl: pulumi.Output<string>;
  readonly deploymentName: pulumi.Output<string>;
  readonly serviceName: pulumi.Output<string>;
  /** The Kubernetes Secret of `secretEnv` (its data is a secret output); none without secret variables. */
  readonly secret: k8s.core.v1.Secret | undefined;

  constructor(name: string, args: VllmDeploymentArgs, opts?: pulumi.ComponentResourceOptions) {
    checkKnownArgs(args);
    // The secret values stay out of the spec: an output derived from a secret is secret, and every object would be.
    const { secretEnv = {}, ...plain } = args;
    super('kiln:stacks:VllmDeployment', name, plain, opts);
    // Every child derives from the checked spec, so arguments known only later are checked before anything is applied.
    const spec = pulumi.output(plain).apply(vllmSpec);
    const metadata = spec.apply((s) => ({ name: s.name, namespace: s.namespace, labels: modelServerLabels(s.name), annotations: KILN_OBJECT_ANNOTATIONS }));
    const selector = spec.apply((s) => ({ matchLabels: modelServerLabels(s.name) }));

    // Decided at construction like the autoscaler: the variables' names are plain, only their values are secret.
    const secretNames = Object.keys(secretEnv).sort();
    const secret = secretNames.length ? new k8s.core.v1.Secret(`${name}-secrets`, {
      metadata: spec.apply((s) => ({ name: secretObjectName(s.name), namespace: s.namespace, annotations: KILN_OBJECT_ANNOTATIONS })),
      type: 'Opaque',
      stringData: Object.fromEntries(secretNames.map((key) => [key, pulumi.secret(secretEnv[key]!)])),
    }, { parent: this, additionalSecretOutputs: ['data', 'stringData'] }) : undefined;

    // With an autoscaler, `replicas` is its field: a field two writers set is a field they fight over (every
    // apply would undo its last scale). The Deployment starts at minReplicas; after that the provider leaves the
    // field out of its applies while the autoscaler owns it, and keeps the live count while Kiln still does (an
    // existing deployment switched to the autoscaler keeps its pods instead of dropping to the default of 1).
    const deployment = new k8s.apps.v1.Deployment(`${name}-deployment`, {
      metadata,
      spec: spec.apply((s) => ({
        replicas: s.horizontalPodAutoscaler ? s.minReplicas : s.replicas,
        selector: { matchLabels: modelServerLabels(s.name) },
        template: podTemplate(s, secretNames),
      })),
    }, {
      parent: this,
      ...(secret ? { dependsOn: [secret] } : {}),
      ...(args.horizontalPodAutoscaler ? { ignoreChanges: ['spec.replicas'] } : {}),
    });

    const service = new k8s.core.v1.Service(`${name}-service`, {
      metadata,
      spec: { selector: spec.apply((s) => modelServerLabels(s.name)), ports: [{ name: VLLM_PORT_NAME, port: 80, targetPort: VLLM_PORT_NAME }] },
    }, { parent: this });

    // Decided at construction (a plain value, not an Input), so a preview shows exactly the objects an up makes.
    if (args.horizontalPodAutoscaler) {
      new k8s.autoscaling.v2.HorizontalPodAutoscaler(`${name}-hpa`, {
        metadata,
        spec: {
          scaleTargetRef: spec.apply((s) => ({ apiVersion: 'apps/v1', kind: 'Deployment', name: s.name })),
          minReplicas: spec.minReplicas,
          maxReplicas: spec.maxReplicas,
          // Scaling on vLLM's request queue, served by the custom metrics API (e.g. prometheus-adapter scraping
          // /metrics); GPU pods use little CPU, so the CPU default would never scale them.
          metrics: [{
            type: 'Pods',
            pods: { metric: { name: 'vllm_num_requests_waiting' }, target: { type: 'AverageValue', averageValue: TARGET_REQUESTS_WAITING } },
          }],
        },
      }, { parent: this, dependsOn: [deployment] });
    }

    // One pod at a time may go during node drains and upgrades; unlike minAvailable, this never blocks
    // the drain of a single-replica deployment.
    new k8s.policy.v1.PodDisruptionBudget(`${name}-pdb`, {
      metadata,
      spec: { maxUnavailable: 1, selector },
    }, { parent: this });

    this.secret = secret;
    this.deploymentName = deployment.metadata.name;
    this.serviceName = service.metadata.name;
    this.serviceUrl = pulumi.all([service.metadata.name, service.metadata.namespace]).apply(([name, namespace]) => serviceUrl(name, namespace));
    this.registerOutputs({ serviceUrl: this.serviceUrl, deploymentName: this.deploymentName, serviceName: this.serviceName });
  }
}

/** The Kubernetes Secret holding a deployment's secret variables. */
export function secretObjectName(deploymentName: string): string {
  return `${deploymentName}-secrets`;
}

function podTemplate(s: VllmSpec, secretNames: readonly string[]): k8s.types.input.core.v1.PodTemplateSpec {
  const health = { httpGet: { path: '/health', port: VLLM_PORT } };
  return {
    metadata: { labels: modelServerLabels(s.name), annotations: s.podAnnotations },
    spec: {
      nodeSelector: { [GPU_TYPE_LABEL]: s.gpuType },
      tolerations: [{ key: GPU_TAINT.key, operator: 'Equal', value: GPU_TAINT.value, effect: GPU_TAINT.effect }],
      containers: [{
        name: 'vllm',
        image: s.image,
        args: s.serverArgs,
        ports: [{ name: VLLM_PORT_NAME, containerPort: VLLM_PORT }],
        ...(secretNames.length ? { env: secretNames.map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: secretObjectName(s.name), key } } })) } : {}),
        resources: { limits: { [GPU_RESOURCE]: String(s.gpusPerReplica) } },
        // Downloading and loading weights takes minutes: the startup probe holds the others off until then.
        startupProbe: { ...health, periodSeconds: 10, failureThreshold: 180 },
        readinessProbe: { ...health, periodSeconds: 5, failureThreshold: 3 },
        livenessProbe: { ...health, periodSeconds: 15, timeoutSeconds: 5, failureThreshold: 4 },
        volumeMounts: [
          { name: 'model-cache', mountPath: '/root/.cache/huggingface' },
          { name: 'shm', mountPath: '/dev/shm' },
          ...(s.modelClaim ? [{ name: 'model-claim', mountPath: s.modelClaim.mountPath, readOnly: true }] : []),
        ],
      }],
      volumes: [
        { name: 'model-cache', emptyDir: { sizeLimit: s.modelCacheSize } },
        // Tensor-parallel workers exchange tensors through shared memory; the container default of 64Mi is too small.
        { name: 'shm', emptyDir: { medium: 'Memory' } },
        // A pvc:// model's claim, read-only: replicas share it (ReadOnlyMany or ReadWriteMany).
        ...(s.modelClaim ? [{ name: 'model-claim', persistentVolumeClaim: { claimName: s.modelClaim.name, readOnly: true } }] : []),
      ],
    },
  };
}
