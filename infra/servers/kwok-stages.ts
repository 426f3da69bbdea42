// kwok's configuration: how simulated GPU nodes and the pods placed on them behave. Nodes turn Ready at
// once and keep their advertised GPUs; pods turn Ready after a delay (as a vLLM server would after loading
// its model) and disappear when deleted.
import { stringify } from 'yaml';

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

const nodeReadyStatus = `${nodeConditions}addresses:
- address: {{ NodeIP | Quote }}
  type: InternalIP
- address: {{ NodeName | Quote }}
  type: Hostname
allocatable:
{{ YAML .status.allocatable 1 }}
capacity:
{{ YAML .status.capacity 1 }}
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

function stage(name: string, spec: Record<string, unknown>) {
  return { apiVersion: 'kwok.x-k8s.io/v1alpha1', kind: 'Stage', metadata: { name }, spec };
}

export function kwokConfig(options: { podReadyDelayMs: number }): string {
  const docs = [
    stage('node-initialize', {
      resourceRef: { apiGroup: 'v1', kind: 'Node' },
      selector: { matchExpressions: [{ ...readyIs('True'), operator: 'NotIn' }] },
      next: { statusTemplate: nodeReadyStatus },
    }),
    stage('node-heartbeat', {
      resourceRef: { apiGroup: 'v1', kind: 'Node' },
      selector: { matchExpressions: [{ key: '.status.phase', operator: 'In', values: ['Running'] }, readyIs('True')] },
      delay: { durationMilliseconds: 20_000, jitterDurationMilliseconds: 25_000 },
      next: { statusTemplate: nodeConditions },
      immediateNextStage: true,
    }),
    stage('pod-ready', {
      resourceRef: { apiGroup: 'v1', kind: 'Pod' },
      selector: {
        matchExpressions: [
          { key: '.metadata.deletionTimestamp', operator: 'DoesNotExist' },
          { key: '.status.podIP', operator: 'DoesNotExist' },
        ],
      },
      delay: { durationMilliseconds: options.podReadyDelayMs },
      next: { statusTemplate: podReadyStatus },
    }),
    stage('pod-delete', {
      resourceRef: { apiGroup: 'v1', kind: 'Pod' },
      selector: { matchExpressions: [{ key: '.metadata.deletionTimestamp', operator: 'Exists' }] },
      next: { finalizers: { empty: true }, delete: true },
    }),
  ];
  return docs.map((d) => stringify(d)).join('---\n');
}
