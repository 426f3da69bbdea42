// Kiln itself on Kubernetes: its API, workers and inference gateways, each a Deployment of any number of pods
// against an external PostgreSQL and Temporal, with Services for the API and the gateways, a disruption budget
// per process, and one Secret holding every secret setting.
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { serviceUrl } from '../../catalog/model-server.ts';
import { KILN_OBJECT_ANNOTATIONS } from '../kiln-objects.ts';
import { checkKnownArgs, checkName, checkSecretValue, kilnSpec, type KilnOnKubernetesArgs, type KilnSpec } from './args.ts';
import { HEALTH_PATHS, KILN_PROCESSES, SECRET_SETTINGS, WORKER_METRICS_PORT, type KilnProcessName, type SecretArg } from './processes.ts';

export { DEFAULT_RESOURCES, type KilnOnKubernetesArgs } from './args.ts';
export { KILN_PROCESSES, type KilnProcessName } from './processes.ts';
export { StackArgsError } from '../args-error.ts';

/**
 * Server-side apply takes back the fields the stack declares (a `kubectl scale` does not make the next up fail),
 * and the up waits for each rollout, unlike Kiln's model servers (skipAwait): whoever runs this stack learns from
 * the up itself that Kiln did not come up.
 */
const ANNOTATIONS = { 'pulumi.com/patchForce': KILN_OBJECT_ANNOTATIONS['pulumi.com/patchForce'] };
/** A Service has nothing to wait for that its Deployment's rollout has not shown, and none at all with 0 replicas. */
const SERVICE_ANNOTATIONS = { ...ANNOTATIONS, 'pulumi.com/skipAwait': KILN_OBJECT_ANNOTATIONS['pulumi.com/skipAwait'] };
/** Where each pod's DATA_DIR is (workflow bundles, Pulumi workspaces): scratch space, nothing kept. */
const DATA_DIR = '/data';
/** The image's user (node's official images: `node`, uid 1000). */
const IMAGE_USER = 1000;

export class KilnOnKubernetes extends pulumi.ComponentResource {
  /** The API's Service, and its in-cluster URL (`http://kiln-api.kiln.svc.cluster.local`): put a load balancer or an Ingress in front of it. */
  readonly apiServiceName: pulumi.Output<string>;
  readonly apiUrl: pulumi.Output<string>;
  /** The inference gateways' Service and its in-cluster URL: OpenAI clients send `/v1/inference` here. */
  readonly gatewayServiceName: pulumi.Output<string>;
  readonly gatewayUrl: pulumi.Output<string>;
  readonly deploymentNames: pulumi.Output<Record<KilnProcessName, string>>;
  /** The Secret of the secret settings; its name changes with its values (Pulumi names it), which rolls every pod. */
  readonly secretName: pulumi.Output<string>;

  /** `name` starts every object's name: `<name>-api`, `<name>-worker`, `<name>-gateway`. */
  constructor(name: string, args: KilnOnKubernetesArgs, opts?: pulumi.ComponentResourceOptions) {
    checkName(name);
    checkKnownArgs(args);
    // Secret values stay out of the spec: an output derived from a secret is secret, and every object would be.
    const { databaseUrl, signingKey, pulumiPassphrase, metricsToken, smtpUrl, secretEnv = {}, ...plain } = args;
    super('kiln:stacks:KilnOnKubernetes', name, plain, opts);
    const spec = pulumi.output(plain).apply((p) => kilnSpec(name, p));

    // Which settings are given is known now (their values may not be): it decides each container's variables.
    const given: Partial<Record<SecretArg, pulumi.Input<string>>> = { databaseUrl, signingKey, pulumiPassphrase, metricsToken, smtpUrl };
    const secretValues: Record<string, pulumi.Input<string>> = { ...secretEnv };
    for (const [arg, value] of Object.entries(given) as [SecretArg, pulumi.Input<string> | undefined][]) {
      if (value !== undefined) secretValues[SECRET_SETTINGS[arg]] = pulumi.output(value).apply((v) => checkSecretValue(arg, v));
    }
    // No metadata.name: Pulumi names it `<name>-secrets-<suffix>` and replaces it (new name first) when a value
    // changes, so the Deployments' references change and every pod restarts with the new values.
    const secret = new k8s.core.v1.Secret(`${name}-secrets`, {
      metadata: spec.apply((s) => ({ namespace: s.namespace, labels: kilnLabels(name), annotations: ANNOTATIONS })),
      type: 'Opaque',
      stringData: Object.fromEntries(Object.entries(secretValues).map(([key, value]) => [key, pulumi.secret(value)])),
    }, { parent: this, additionalSecretOutputs: ['data', 'stringData'] });
    const secretVariables = { names: Object.keys(secretValues), extra: Object.keys(secretEnv), metrics: metricsToken !== undefined };

    const deployments = {} as Record<KilnProcessName, k8s.apps.v1.Deployment>;
    for (const process of Object.keys(KILN_PROCESSES) as KilnProcessName[]) {
      const labels = kilnLabels(name, process);
      const metadata = spec.apply((s) => ({ name: `${name}-${process}`, namespace: s.namespace, labels, annotations: ANNOTATIONS }));
      deployments[process] = new k8s.apps.v1.Deployment(`${name}-${process}`, {
        metadata,
        spec: pulumi.all([spec, secret.metadata.name]).apply(([s, objectName]) => deploymentSpec(s, process, { ...secretVariables, objectName })),
      }, { parent: this });
      // One pod at a time may go in a drain; unlike minAvailable, this never blocks the drain of a single pod.
      new k8s.policy.v1.PodDisruptionBudget(`${name}-${process}`, {
        metadata,
        spec: { maxUnavailable: 1, selector: { matchLabels: labels } },
      }, { parent: this });
    }

    const services = {} as Record<'api' | 'gateway', k8s.core.v1.Service>;
    for (const process of ['api', 'gateway'] as const) {
      services[process] = new k8s.core.v1.Service(`${name}-${process}`, {
        metadata: spec.apply((s) => ({ name: `${name}-${process}`, namespace: s.namespace, labels: kilnLabels(name, process), annotations: SERVICE_ANNOTATIONS })),
        spec: { selector: kilnLabels(name, process), ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
      }, { parent: this });
    }

    const urlOf = (service: k8s.core.v1.Service) => pulumi.all([service.metadata.name, service.metadata.namespace]).apply(([n, ns]) => serviceUrl(n, ns));
    this.apiServiceName = services.api.metadata.name;
    this.apiUrl = urlOf(services.api);
    this.gatewayServiceName = services.gateway.metadata.name;
    this.gatewayUrl = urlOf(services.gateway);
    this.deploymentNames = pulumi.all([deployments.api.metadata.name, deployments.worker.metadata.name, deployments.gateway.metadata.name])
      .apply(([api, worker, gateway]) => ({ api, worker, gateway }));
    this.secretName = secret.metadata.name;
    this.registerOutputs({
      apiServiceName: this.apiServiceName, apiUrl: this.apiUrl, gatewayServiceName: this.gatewayServiceName, gatewayUrl: this.gatewayUrl,
      deploymentNames: this.deploymentNames, secretName: this.secretName,
    });
  }
}

/** The labels of one installation's pods and objects; with a process, the selector of that process's pods alone. */
export function kilnLabels(name: string, process?: KilnProcessName): Record<string, string> {
  return { 'app.kubernetes.io/name': 'kiln', 'app.kubernetes.io/instance': name, ...(process ? { 'app.kubernetes.io/component': process } : {}) };
}

interface SecretVariables {
  /** Every variable the Secret holds. */
  readonly names: readonly string[];
  /** Those of secretEnv, which every process reads. */
  readonly extra: readonly string[];
  readonly objectName: string;
  /** Whether KILN_METRICS_TOKEN is given: the worker then listens for scrapers. */
  readonly metrics: boolean;
}

function deploymentSpec(s: KilnSpec, process: KilnProcessName, secrets: SecretVariables): k8s.types.input.apps.v1.DeploymentSpec {
  const labels = kilnLabels(s.name, process);
  return {
    replicas: s.replicas[process],
    selector: { matchLabels: labels },
    // A new pod is ready before an old one goes, so a rollout never takes serving capacity away; one that never
    // turns ready (a bad image, a setting refused) stops the rollout with the old pods still running.
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    // The worker has no readiness probe: a new worker counts as available once it has run 10 s without exiting.
    ...(KILN_PROCESSES[process].health ? {} : { minReadySeconds: 10 }),
    template: { metadata: { labels }, spec: podSpec(s, process, secrets) },
  };
}

function podSpec(s: KilnSpec, process: KilnProcessName, secrets: SecretVariables): k8s.types.input.core.v1.PodSpec {
  const kiln = KILN_PROCESSES[process];
  const port = kiln.port ?? (process === 'worker' && secrets.metrics ? WORKER_METRICS_PORT : undefined);
  const secretVariables = [...kiln.secrets.map((arg) => SECRET_SETTINGS[arg]), ...secrets.extra].filter((v) => secrets.names.includes(v));
  const health = (path: string) => ({ httpGet: { path, port: 'http' } });
  return {
    // Kiln reaches its clusters with the kubeconfigs it keeps, never as this pod's service account.
    automountServiceAccountToken: false,
    securityContext: { runAsNonRoot: true, runAsUser: IMAGE_USER, runAsGroup: IMAGE_USER, seccompProfile: { type: 'RuntimeDefault' } },
    // Replicas on different nodes where there are nodes enough: one node lost takes one replica.
    topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: kilnLabels(s.name, process) } }],
    containers: [{
      name: process,
      image: s.image,
      command: [...kiln.command],
      env: [
        { name: 'KILN_ENV', value: s.environment },
        { name: 'TEMPORAL_ADDRESS', value: s.temporalAddress },
        { name: 'DATA_DIR', value: DATA_DIR },
        ...(port ? [{ name: port.env, value: String(port.number) }] : []),
        ...Object.entries(s.env).map(([key, value]) => ({ name: key, value })),
        ...secretVariables.map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: secrets.objectName, key } } })),
      ],
      ...(port ? { ports: [{ name: port.name, containerPort: port.number }] } : {}),
      ...(kiln.health ? {
        // The API migrates the database before it listens: a first start may take minutes.
        startupProbe: { ...health(HEALTH_PATHS.live), periodSeconds: 5, failureThreshold: 60 },
        livenessProbe: { ...health(HEALTH_PATHS.live), periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 },
        // The API's readiness fails while its database is away; the gateway's does not (it serves from its caches).
        readinessProbe: { ...health(HEALTH_PATHS.ready), periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 2 },
        // Time for the Service to drop the pod before it stops taking connections.
        lifecycle: { preStop: { sleep: { seconds: 5 } } },
      } : {}),
      resources: s.resources[process],
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      volumeMounts: [{ name: 'data', mountPath: DATA_DIR }],
    }],
    volumes: [{ name: 'data', emptyDir: {} }],
  };
}
