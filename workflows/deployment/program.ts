// The Pulumi program of one deployment: the vllm-deployment component on the cluster that serves its GPU
// type, in its organization's namespace (which no deployment's stack owns). A stopped deployment's program declares nothing, so `pulumi up`
// removes its pods (and the GPUs they hold) while the stack and its history stay.
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import type { PulumiFn } from '@pulumi/pulumi/automation/index.js';
import { serviceUrl } from '../../catalog/model-server.ts';
import { VllmDeployment, vllmSpec } from '../../stacks/vllm-deployment/index.ts';
import type { KubeApi } from '../../lib/kubernetes/api.ts';
import { namespaceOf } from '../contract/deployment.ts';
import type { ProgramRef } from '../pulumi/automation.ts';
import type { StackTarget } from '../contract/deployment.ts';
import type { ClusterAccess } from './activities.ts';

/** Pod-template annotation carrying the deployment's restart count. */
export const RESTARTS_ANNOTATION = 'kiln.dev/restarts';



/** Creates an organization's namespace when it is missing; an existing one is left as it is. */
export async function ensureNamespace(api: KubeApi, namespace: string): Promise<void> {
  await api.ensure('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: { 'app.kubernetes.io/managed-by': 'kiln' } } });
}

/** Pod-template annotation naming the secrets mounted (ids, no values): mounting another one rolls the pods. */
export const SECRETS_ANNOTATION = 'kiln.dev/secrets';

/**
 * Reference to deploymentProgram for the activities, which run it in a process of its own (its input goes
 * over the IPC channel, never the command line). `secretEnv`: the opened values of the deployment's secrets.
 */
export function deploymentProgramRef(target: StackTarget, cluster: ClusterAccess, secretEnv: Readonly<Record<string, string>> = {}): ProgramRef {
  return { programModule: import.meta.url, programExport: 'deploymentProgram', programInput: { target, cluster, secretEnv } };
}

export function deploymentProgram({ target, cluster, secretEnv = {} }: { target: StackTarget; cluster: ClusterAccess; secretEnv?: Readonly<Record<string, string>> }): PulumiFn {
  return async () => {
    const namespace = namespaceOf(target.organizationId);
    // The Service the stack would make is named after the deployment.
    if (!target.desired.running) return { serviceUrl: serviceUrl(target.name, namespace) };
    const provider = new k8s.Provider('cluster', { kubeconfig: cluster.kubeconfig }, {});
    // The namespace is the organization's, made by the activity before this runs (activities.ts `namespaces`).
    // Secret outputs: the stack's state keeps them encrypted with the stack's secrets provider.
    const secrets = Object.fromEntries(Object.entries(secretEnv).map(([variable, value]) => [variable, pulumi.secret(value)]));
    const vllm = new VllmDeployment(target.name, { ...vllmArgs(target, namespace), ...(Object.keys(secrets).length ? { secretEnv: secrets } : {}) }, { provider });
    return { serviceUrl: vllm.serviceUrl };
  };
}

/** Applies the component's rules to a target before any Pulumi process starts (throws StackArgsError). */
export function checkDeployment(target: StackTarget): void {
  if (target.desired.running) vllmSpec(vllmArgs(target, namespaceOf(target.organizationId)));
}

function vllmArgs(target: StackTarget, namespace: string) {
  const { desired } = target;
  return {
    name: target.name, namespace, model: desired.model, gpuType: desired.gpu, gpusPerReplica: desired.gpusPerReplica ?? 1,
    replicas: desired.replicas, minReplicas: desired.minReplicas, maxReplicas: desired.maxReplicas,
    ...(desired.contextLength === undefined ? {} : { maxModelLen: desired.contextLength }),
    ...(desired.dtype === undefined ? {} : { dtype: desired.dtype }),
    ...(desired.vllmArgs === undefined ? {} : { extraArgs: [...desired.vllmArgs] }),
    // A new value changes the pod template, so Kubernetes replaces the pods one by one: a rolling restart.
    podAnnotations: {
      [RESTARTS_ANNOTATION]: String(desired.restarts),
      ...(desired.secrets?.length ? { [SECRETS_ANNOTATION]: desired.secrets.map((s) => `${s.name}=${s.secretId}`).join(',') } : {}),
    },
  };
}
