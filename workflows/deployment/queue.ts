// The kiln-deployments task queue: one workflow per deployment and one per `aws` or `local` GPU cluster, with the
// activities that run Kiln's real programs (Pulumi, readiness, status writes) on the cluster each targets.
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { deriveKey, organizationSecretsKeyRing } from '../../lib/keys.ts';
import { createSecretBox, type KeyRing, type SecretBox } from '../../lib/secret-box.ts';
import type { Orm } from '../../control-plane/database/orm.ts';
import { createCircuitService, type CircuitService } from '../../control-plane/recovery/circuits.ts';
import { kubeApi, parseKubeconfig, type KubeApi } from '../../lib/kubernetes/api.ts';
import { checkNodeGroups, GPUS_PER_INSTANCE, instanceTypeFor } from '../../stacks/gpu-cluster/index.ts';
import { StackArgsError } from '../../stacks/args-error.ts';
import { nodePoolsProblem } from '../../catalog/node-pools.ts';
import { createClusterActivities } from '../cluster/activities.ts';
import { poolsReady } from '../cluster/local-nodes.ts';
import { poolGrowth } from '../cluster/pool-growth.ts';
import { poolShrink } from '../cluster/pool-shrink.ts';
import { clusterProgramRef, localClusterProgramRef } from '../cluster/program.ts';
import { createClusterStore } from '../cluster/store.ts';
import { DEPLOYMENTS_TASK_QUEUE, namespaceOf } from '../contract/deployment.ts';
import type { PulumiSettings } from '../pulumi/automation.ts';
import type { QueueModule, WorkerDeps } from '../queue.ts';
import { webhookDeliveries } from '../webhooks/store.ts';
import { createDeploymentActivities } from './activities.ts';
import { clusterAccess, provisioningCircuits } from './clusters.ts';
import { checkDeployment, deploymentProgramRef, ensureNamespace } from './program.ts';
import { kubernetesReadiness } from './readiness.ts';
import { secretValues } from './secrets.ts';
import { createStatusStore, type EventDeliveries } from './status-store.ts';
import type { PrometheusClient } from '../../lib/prometheus/client.ts';
import { measureDeploymentLoad } from '../../lib/prometheus/deployment-metrics.ts';

export interface DeploymentActivitiesOptions {
  readonly orm: Orm;
  /** Unseals the kubeconfigs of registered clusters. */
  readonly kubeconfigs: SecretBox;
  readonly pulumi: PulumiSettings;
  /** Starts webhook deliveries of recorded events; none when absent. */
  readonly deliveries?: EventDeliveries;
  /** The provisioning circuits' rules; Kiln's defaults when absent. */
  readonly circuits?: CircuitService;
  /** How often readiness is polled (the activities' default when absent). */
  readonly pollIntervalMs?: number;
  /** The Prometheus scraping the model servers: the autoscaler reads their load there. */
  readonly prometheus: PrometheusClient;
  /** How often the autoscaler measures (its default when absent). */
  readonly autoscaleIntervalMs?: number;
  /** How long pods may stay unschedulable before the deployment fails (the activities' default when absent). */
  readonly unschedulableGraceMs?: number;
  /** Opens the organizations' secrets deployments mount; deployments mount none when absent. */
  readonly secrets?: KeyRing;
  /** Where lifecycle edges are logged; nowhere when absent. */
  readonly log?: Logger;
  /** Signals the clusters' workflows to grow their node pools for deployments, and starts the capacity events' webhooks; no pool grows or shrinks when absent. */
  readonly client?: Client;
  /** How long a node of a local cluster's pool may run no Kiln replica before it is removed (pool-shrink.ts's default when absent). */
  readonly poolIdleMs?: number;
}

/**
 * The activities of the deployments task queue: deployments (Kiln's real program, deploymentProgramRef, on
 * the cluster each was placed on, reached with its kubeconfig) and GPU clusters.
 */
export function deploymentActivities(options: DeploymentActivitiesOptions) {
  const { orm, kubeconfigs, pulumi } = options;
  const apis = new Map<string, KubeApi>();
  const apiFor = (kubeconfig: string) => apis.get(kubeconfig) ?? apis.set(kubeconfig, kubeApi(parseKubeconfig(kubeconfig))).get(kubeconfig)!;
  const clusterStore = createClusterStore(orm, kubeconfigs);
  return {
    ...createDeploymentActivities({
      pulumi,
      programFor: deploymentProgramRef,
      ...(options.secrets ? { secrets: secretValues(orm, options.secrets) } : {}),
      check: checkDeployment,
      clusters: clusterAccess(orm, kubeconfigs),
      namespaces: { ensure: (cluster, organizationId) => ensureNamespace(apiFor(cluster.kubeconfig), namespaceOf(organizationId)) },
      circuits: provisioningCircuits(orm, options.circuits ?? createCircuitService()),
      statuses: createStatusStore(orm, options.deliveries, options.log),
      readiness: {
        probe: (target, cluster) => kubernetesReadiness(apiFor(cluster.kubeconfig), namespaceOf).probe(target),
        replaceLost: (target, cluster) => kubernetesReadiness(apiFor(cluster.kubeconfig), namespaceOf).replaceLost(target),
      },
      pollIntervalMs: options.pollIntervalMs,
      load: { measure: ({ organizationId, name, windowSeconds }) => measureDeploymentLoad(options.prometheus, { namespace: namespaceOf(organizationId), deployment: name }, windowSeconds) },
      autoscaleIntervalMs: options.autoscaleIntervalMs,
      unschedulableGraceMs: options.unschedulableGraceMs,
      ...(options.client ? { pools: poolGrowth(orm, options.client) } : {}),
    }),
    ...createClusterActivities({
      pulumi,
      programFor: clusterProgramRef,
      localProgramFor: localClusterProgramRef,
      check: ({ desired }) => {
        if (desired.provider !== 'local') return checkNodeGroups(desired.nodeGroups);
        const problem = nodePoolsProblem(desired.nodePools);
        if (problem) throw new StackArgsError(`${problem.field}: ${problem.message}`);
      },
      gpusPerNode: (gpuType) => GPUS_PER_INSTANCE[instanceTypeFor(gpuType)] ?? 0,
      poolsReady: (kubeconfig, desired) => poolsReady(apiFor(kubeconfig), desired),
      pollIntervalMs: options.pollIntervalMs,
      store: clusterStore,
      ...(options.client ? {
        pools: poolShrink({ orm, client: options.client, apiOf: async (clusterId) => apiFor(await clusterStore.kubeconfig(clusterId)), idleAfterMs: options.poolIdleMs }),
      } : {}),
    }),
  };
}

export const deploymentsQueue = {
  taskQueue: DEPLOYMENTS_TASK_QUEUE,
  // It exports the cluster workflow too.
  workflowsPath: new URL('./workflow.ts', import.meta.url).pathname,
  activities: ({ orm, client, log, signingKey, secretsKeys, pulumi, prometheus, autoscaleIntervalMs, unschedulableGraceMs, poolIdleMs }: Pick<WorkerDeps, 'orm' | 'client' | 'log' | 'signingKey' | 'secretsKeys' | 'pulumi' | 'prometheus' | 'autoscaleIntervalMs' | 'unschedulableGraceMs' | 'poolIdleMs'>) => deploymentActivities({
    orm, pulumi, prometheus, autoscaleIntervalMs, unschedulableGraceMs, poolIdleMs, log, client,
    // The secrets key ring as the API's (config.ts): the signing key's unless KILN_SECRETS_KEY is set.
    secrets: organizationSecretsKeyRing(secretsKeys?.current ?? signingKey, secretsKeys?.previous ?? []),
    kubeconfigs: createSecretBox(deriveKey(signingKey, 'cluster-kubeconfigs')), deliveries: webhookDeliveries(orm, client),
  }),
} satisfies QueueModule;
