// kwok's configuration: how simulated GPU nodes and the pods placed on them behave. Nodes turn Ready at
// once and keep their advertised GPUs; pods turn Ready after a delay (as a vLLM server would after loading
// its model) and disappear when deleted. Pods marked to fail crash-loop instead, for the failure paths.
import { stringify } from 'yaml';
import { GPU_RESOURCE } from '../../catalog/gpu-types.ts';
import { GPU_COUNT_LABEL, SIMULATED_NODE_RESOURCES } from '../../stacks/local-gpu-pool/node.ts';

/** Pods with this annotation set to "true" never turn Ready: kwok crash-loops them. */
export const FAIL_ANNOTATION = 'sim.kiln.dev/fail';
/**
 * Nodes with this annotation set to "true" are a host that stopped reporting: kwok no longer keeps their status,
 * so a test can make them NotReady and they stay so (node loss).
 */
export const NODE_DOWN_ANNOTATION = 'sim.kiln.dev/down';

const nodeConditions = `{{ $now := Now }}
conditions:
{{ range NodeConditions }}
- lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ or $.metadata.creationTimestamp $now | Quote }}
  message: {{ .message | Quote }}
  reason: {{ .reason | Quote }}
  status: {{ .status | Quote }}
  type: {{ .type | Quote }}
{{ end }}
`;

/**
 * What a node offers: what its status already says (a kept cluster's nodes, nodes made with a status), else
 * stacks/local-gpu-pool/node.ts's resources and as many GPUs as its GPU_COUNT_LABEL says.
 */
const advertised = (field: 'allocatable' | 'capacity') => `{{ with .status.${field} }}
{{ YAML . 1 }}
{{ else }}
${Object.entries(SIMULATED_NODE_RESOURCES).map(([resource, quantity]) => `  ${resource}: ${JSON.stringify(quantity)}\n`).join('')}\
{{ with index .metadata.labels ${JSON.stringify(GPU_COUNT_LABEL)} }}
  ${GPU_RESOURCE}: {{ . | Quote }}
{{ end }}
{{ end }}
`;

/** A Ready node; it names kwok's kubelet API as its kubelet, which the API server calls for pod logs. */
const nodeReadyStatus = (kubeletPort: number) => `${nodeConditions}addresses:
- address: {{ NodeIP | Quote }}
  type: InternalIP
- address: {{ .metadata.name | Quote }}
  type: Hostname
allocatable:
${advertised('allocatable')}capacity:
${advertised('capacity')}daemonEndpoints:
  kubeletEndpoint:
    Port: ${kubeletPort}
nodeInfo:
  architecture: amd64
  operatingSystem: linux
  kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
  containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
phase: Running
`;

const readyIs = (value: 'True') => ({ key: '.status.conditions.[] | select( .type == "Ready" ) | .status', operator: 'In', values: [value] });

const podReadyStatus = `{{ $now := Now }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: Initialized
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: Ready
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: ContainersReady
containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: true
  restartCount: 0
  started: true
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ end }}
hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
phase: Running
startTime: {{ $now | Quote }}
`;

const crashLoopingContainer = `  ready: false
  started: false
  state:
    waiting:
      reason: CrashLoopBackOff
      message: {{ printf "back-off restarting failed container=%s pod=%s" .name $.metadata.name | Quote }}
  lastState:
    terminated:
      exitCode: 1
      reason: Error
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
`;

/** A pod that fails: scheduled and given an IP, but its container keeps exiting, as a vLLM that cannot start. */
const podCrashStatus = `{{ $now := Now }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: Initialized
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  reason: ContainersNotReady
  type: Ready
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  reason: ContainersNotReady
  type: ContainersReady
containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  restartCount: 0
${crashLoopingContainer}{{ end }}
hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
phase: Running
startTime: {{ $now | Quote }}
`;

/** The next crash of a failing pod: one more restart. */
const podRestartStatus = `{{ $now := Now }}
containerStatuses:
{{ range .status.containerStatuses }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  restartCount: {{ add .restartCount 1 }}
${crashLoopingContainer}{{ end }}
`;

/**
 * A jq expression (kwok's selectors are gojq queries) true for a pod marked to fail: the annotation, or an
 * argument of one of its containers naming a failing model.
 */
function failsExpression(failingModels: readonly string[]): string {
  const annotated = `(.metadata.annotations[${JSON.stringify(FAIL_ANNOTATION)}]? == "true")`;
  if (!failingModels.length) return annotated;
  return `${annotated} or any(.spec.containers[]?.args[]?; ${failingModels.map((m) => `. == ${JSON.stringify(m)}`).join(' or ')})`;
}

/**
 * kwok's `Logs` resource as a CRD: with `--enable-crds=Logs` kwok reads one object per pod naming the file its
 * kubelet API serves as that pod's log (the model server simulator creates them). Its schema is left open:
 * only kwok reads these objects.
 */
export const KWOK_LOGS_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'logs.kwok.x-k8s.io' },
  spec: {
    group: 'kwok.x-k8s.io',
    names: { kind: 'Logs', listKind: 'LogsList', plural: 'logs', singular: 'logs' },
    scope: 'Namespaced',
    versions: [{
      name: 'v1alpha1', served: true, storage: true, subresources: { status: {} },
      schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    }],
  },
};

function stage(name: string, spec: Record<string, unknown>) {
  return { apiVersion: 'kwok.x-k8s.io/v1alpha1', kind: 'Stage', metadata: { name }, spec };
}

export interface KwokConfigOptions {
  readonly podReadyDelayMs: number;
  /** Port of kwok's kubelet API, which nodes advertise so the API server reaches it for pod logs. */
  readonly kubeletPort: number;
  /** Pods serving one of these models (named in a container argument) fail like annotated ones. */
  readonly failingModels?: readonly string[];
  /** Milliseconds between two restarts of a failing pod. */
  readonly crashLoopIntervalMs?: number;
}

export function kwokConfig(options: KwokConfigOptions): string {
  const fails = { key: failsExpression(options.failingModels ?? []), operator: 'In', values: ['true'] };
  const notDeleted = { key: '.metadata.deletionTimestamp', operator: 'DoesNotExist' };
  const nodeUp = { key: `(.metadata.annotations[${JSON.stringify(NODE_DOWN_ANNOTATION)}]? == "true")`, operator: 'NotIn', values: ['true'] };
  const docs = [
    stage('node-initialize', {
      resourceRef: { apiGroup: 'v1', kind: 'Node' },
      selector: { matchExpressions: [{ ...readyIs('True'), operator: 'NotIn' }, nodeUp] },
      next: { statusTemplate: nodeReadyStatus(options.kubeletPort) },
    }),
    stage('node-heartbeat', {
      resourceRef: { apiGroup: 'v1', kind: 'Node' },
      selector: { matchExpressions: [{ key: '.status.phase', operator: 'In', values: ['Running'] }, readyIs('True'), nodeUp] },
      delay: { durationMilliseconds: 20_000, jitterDurationMilliseconds: 25_000 },
      next: { statusTemplate: nodeConditions },
      immediateNextStage: true,
    }),
    stage('pod-ready', {
      resourceRef: { apiGroup: 'v1', kind: 'Pod' },
      selector: { matchExpressions: [notDeleted, { key: '.status.podIP', operator: 'DoesNotExist' }, { ...fails, operator: 'NotIn' }] },
      delay: { durationMilliseconds: options.podReadyDelayMs },
      next: { statusTemplate: podReadyStatus },
    }),
    stage('pod-crash', {
      resourceRef: { apiGroup: 'v1', kind: 'Pod' },
      selector: { matchExpressions: [notDeleted, { key: '.status.podIP', operator: 'DoesNotExist' }, fails] },
      delay: { durationMilliseconds: options.podReadyDelayMs },
      next: { statusTemplate: podCrashStatus },
    }),
    stage('pod-crash-restart', {
      resourceRef: { apiGroup: 'v1', kind: 'Pod' },
      selector: { matchExpressions: [notDeleted, { key: '.status.podIP', operator: 'Exists' }, fails] },
      delay: { durationMilliseconds: options.crashLoopIntervalMs ?? 10_000 },
      next: { statusTemplate: podRestartStatus },
    }),
    stage('pod-delete', {
      resourceRef: { apiGroup: 'v1', kind: 'Pod' },
      selector: { matchExpressions: [{ key: '.metadata.deletionTimestamp', operator: 'Exists' }] },
      next: { finalizers: { empty: true }, delete: true },
    }),
  ];
  return docs.map((d) => stringify(d)).join('---\n');
}
