// The Temporal worker of Kiln's task queues: deployments, webhook deliveries and reports.
// `npm run worker` runs one from the environment; infra/start.ts runs one beside the API with startWorker().
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { deriveKey } from '../control-plane/auth/keys.ts';
import { createSecretBox, type SecretBox } from '../control-plane/auth/secret-box.ts';
import { loadConfig } from '../control-plane/config.ts';
import { openDatabase, type Orm } from '../control-plane/database/orm.ts';
import { createCircuitService, type CircuitService } from '../control-plane/recovery/circuits.ts';
import { kubeApi, parseKubeconfig, type KubeApi } from '../lib/kubernetes/api.ts';
import { checkNodeGroups, GPUS_PER_INSTANCE, instanceTypeFor } from '../stacks/gpu-cluster/index.ts';
import { createClusterActivities } from './cluster/activities.ts';
import { clusterProgramRef } from './cluster/program.ts';
import { createClusterStore } from './cluster/store.ts';
import { clusterAccess, provisioningCircuits } from './deployment/clusters.ts';
import { DEPLOYMENTS_TASK_QUEUE, namespaceOf } from './contract/deployment.ts';
import { WEBHOOKS_TASK_QUEUE } from './contract/webhooks.ts';
import { REPORTS_TASK_QUEUE } from './contract/reports.ts';
import { createReportActivities } from './reports/activities.ts';
import { reportStore } from './reports/store.ts';
import { createWebhookActivities } from './webhooks/activities.ts';
import { webhookDeliveries, webhookStore } from './webhooks/store.ts';
import { createDeploymentActivities } from './deployment/activities.ts';
import { checkDeployment, deploymentProgramRef, ensureNamespace } from './deployment/program.ts';
import { kubernetesReadiness } from './deployment/readiness.ts';
import { createStatusStore, type EventDeliveries } from './deployment/status-store.ts';
import type { PulumiSettings } from './pulumi/automation.ts';

export interface WorkerOptions {
  readonly temporalAddress: string;
  readonly databaseUrl: string;
  readonly dataDir: string;
  /** Pulumi state backend; a file backend under dataDir when absent. */
  readonly pulumiBackendUrl?: string;
  readonly pulumiPassphrase: string;
  /** Kiln's signing secret (KILN_SIGNING_KEY): unseals webhook signing secrets and cluster kubeconfigs. */
  readonly signingKey: string;
  /** Development delivers webhooks to loopback and private addresses; production refuses them. */
  readonly allowPrivateWebhookUrls: boolean;
}

export interface RunningWorker {
  stop(): Promise<void>;
}

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
}

/**
 * The activities of the deployments task queue: deployments (Kiln's real program, deploymentProgramRef, on
 * the cluster each was placed on, reached with its kubeconfig) and GPU clusters.
 */
export function deploymentActivities(options: DeploymentActivitiesOptions) {
  const { orm, kubeconfigs, pulumi } = options;
  const apis = new Map<string, KubeApi>();
  const apiFor = (kubeconfig: string) => apis.get(kubeconfig) ?? apis.set(kubeconfig, kubeApi(parseKubeconfig(kubeconfig))).get(kubeconfig)!;
  return {
    ...createDeploymentActivities({
      pulumi,
      programFor: deploymentProgramRef,
      check: checkDeployment,
      clusters: clusterAccess(orm, kubeconfigs),
      namespaces: { ensure: (cluster, organizationId) => ensureNamespace(apiFor(cluster.kubeconfig), namespaceOf(organizationId)) },
      circuits: provisioningCircuits(orm, options.circuits ?? createCircuitService()),
      statuses: createStatusStore(orm, options.deliveries),
      readiness: { probe: (target, cluster) => kubernetesReadiness(apiFor(cluster.kubeconfig), namespaceOf).probe(target) },
      pollIntervalMs: options.pollIntervalMs,
    }),
    ...createClusterActivities({
      pulumi,
      programFor: clusterProgramRef,
      check: (target) => checkNodeGroups(target.desired.nodeGroups),
      gpusPerNode: (gpuType) => GPUS_PER_INSTANCE[instanceTypeFor(gpuType)] ?? 0,
      store: createClusterStore(orm, kubeconfigs),
    }),
  };
}

/**
 * One process polls every task queue: deployments and GPU clusters (Pulumi, readiness, status), webhook
 * deliveries and reports. Each deployment runs on the cluster it was placed on, reached with that cluster's kubeconfig.
 */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const orm = await openDatabase(options.databaseUrl, { migrate: false });
  const kubeconfigs = createSecretBox(deriveKey(options.signingKey, 'cluster-kubeconfigs'));
  const pulumi = {
    backendUrl: options.pulumiBackendUrl ?? `file://${join(options.dataDir, 'pulumi-state')}`,
    passphrase: options.pulumiPassphrase,
    workspacesDir: join(options.dataDir, 'pulumi-workspaces'),
  };
  const connection = await NativeConnection.connect({ address: options.temporalAddress });
  const client = new Client({ connection: await Connection.connect({ address: options.temporalAddress }) });
  const deployments = await Worker.create({
    connection,
    taskQueue: DEPLOYMENTS_TASK_QUEUE,
    workflowsPath: new URL('./deployments-queue.ts', import.meta.url).pathname,
    activities: deploymentActivities({ orm, kubeconfigs, pulumi, deliveries: webhookDeliveries(orm, client) }),
  });
  const webhooks = await Worker.create({
    connection,
    taskQueue: WEBHOOKS_TASK_QUEUE,
    workflowsPath: new URL('./webhooks/workflow.ts', import.meta.url).pathname,
    activities: createWebhookActivities({
      ...webhookStore(orm, createSecretBox(deriveKey(options.signingKey, 'webhook-secrets'))),
      allowPrivateUrls: options.allowPrivateWebhookUrls,
    }),
  });
  const reports = await Worker.create({
    connection,
    taskQueue: REPORTS_TASK_QUEUE,
    workflowsPath: new URL('./reports/workflow.ts', import.meta.url).pathname,
    activities: createReportActivities({ store: reportStore(orm), dir: join(options.dataDir, 'reports') }),
  });
  const running = Promise.all([deployments.run(), webhooks.run(), reports.run()]);
  return {
    async stop() {
      // On Ctrl-C the SDK has already begun shutting the workers down (it handles SIGINT itself).
      for (const worker of [deployments, webhooks, reports]) if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await client.connection.close();
      await connection.close();
      await orm.close();
    },
  };
}

if (import.meta.main) {
  const env = process.env;
  const missing = ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'PULUMI_CONFIG_PASSPHRASE'].filter((k) => !env[k]);
  if (missing.length) {
    console.error(`kiln worker: set ${missing.join(', ')}`);
    process.exit(2);
  }
  const config = await loadConfig();
  const worker = await startWorker({
    temporalAddress: env.TEMPORAL_ADDRESS!, databaseUrl: env.DATABASE_URL!,
    dataDir: config.dataDir, pulumiBackendUrl: env.PULUMI_BACKEND_URL, pulumiPassphrase: env.PULUMI_CONFIG_PASSPHRASE!,
    signingKey: config.signingKey, allowPrivateWebhookUrls: config.env !== 'production',
  });
  const stop = () => void worker.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
