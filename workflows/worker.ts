// The Temporal worker of Kiln's task queues: deployments, webhook deliveries and reports.
// `npm run worker` runs one from the environment; infra/start.ts runs one beside the API with startWorker().
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { deriveKey } from '../control-plane/auth/keys.ts';
import { createSecretBox } from '../control-plane/auth/secret-box.ts';
import { loadConfig } from '../control-plane/config.ts';
import { openDatabase } from '../control-plane/database/orm.ts';
import { credentialsFromKubeconfig, kubeApi } from '../infra/servers/kube-api.ts';
import { DEPLOYMENTS_TASK_QUEUE } from './contract/deployment.ts';
import { WEBHOOKS_TASK_QUEUE } from './contract/webhooks.ts';
import { REPORTS_TASK_QUEUE } from './contract/reports.ts';
import { createReportActivities } from './reports/activities.ts';
import { reportStore } from './reports/store.ts';
import { createWebhookActivities } from './webhooks/activities.ts';
import { webhookDeliveries, webhookStore } from './webhooks/store.ts';
import { createDeploymentActivities } from './deployment/activities.ts';
import { checkDeployment, deploymentProgramRef, namespaceOf } from './deployment/program.ts';
import { kubernetesReadiness } from './deployment/readiness.ts';
import { createStatusStore } from './deployment/status-store.ts';

export interface WorkerOptions {
  readonly temporalAddress: string;
  readonly databaseUrl: string;
  /** Kubeconfig of the GPU cluster deployments run on. */
  readonly kubeconfig: string;
  readonly dataDir: string;
  /** Pulumi state backend; a file backend under dataDir when absent. */
  readonly pulumiBackendUrl?: string;
  readonly pulumiPassphrase: string;
  /** Kiln's signing secret (KILN_SIGNING_KEY): unseals webhook signing secrets. */
  readonly signingKey: string;
  /** Development delivers webhooks to loopback and private addresses; production refuses them. */
  readonly allowPrivateWebhookUrls: boolean;
}

export interface RunningWorker {
  stop(): Promise<void>;
}

/** One process polls every task queue: deployments (Pulumi, readiness, status), webhook deliveries and reports. */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const orm = await openDatabase(options.databaseUrl, { migrate: false });
  const kubeconfig = await readFile(options.kubeconfig, 'utf8');
  const api = kubeApi(await credentialsFromKubeconfig(options.kubeconfig));
  const connection = await NativeConnection.connect({ address: options.temporalAddress });
  const client = new Client({ connection: await Connection.connect({ address: options.temporalAddress }) });
  const deployments = await Worker.create({
    connection,
    taskQueue: DEPLOYMENTS_TASK_QUEUE,
    workflowsPath: new URL('./deployment/workflow.ts', import.meta.url).pathname,
    activities: createDeploymentActivities({
      pulumi: {
        backendUrl: options.pulumiBackendUrl ?? `file://${join(options.dataDir, 'pulumi-state')}`,
        passphrase: options.pulumiPassphrase,
        workspacesDir: join(options.dataDir, 'pulumi-workspaces'),
      },
      programFor: (target) => deploymentProgramRef(target, { kubeconfig }),
      check: checkDeployment,
      statuses: createStatusStore(orm, webhookDeliveries(orm, client)),
      readiness: kubernetesReadiness(api, namespaceOf),
    }),
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
      deployments.shutdown();
      webhooks.shutdown();
      reports.shutdown();
      await running;
      await client.connection.close();
      await connection.close();
      await orm.close();
    },
  };
}

if (import.meta.main) {
  const env = process.env;
  const missing = ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'KUBECONFIG', 'PULUMI_CONFIG_PASSPHRASE'].filter((k) => !env[k]);
  if (missing.length) {
    console.error(`kiln worker: set ${missing.join(', ')}`);
    process.exit(2);
  }
  const config = await loadConfig();
  const worker = await startWorker({
    temporalAddress: env.TEMPORAL_ADDRESS!, databaseUrl: env.DATABASE_URL!, kubeconfig: env.KUBECONFIG!,
    dataDir: config.dataDir, pulumiBackendUrl: env.PULUMI_BACKEND_URL, pulumiPassphrase: env.PULUMI_CONFIG_PASSPHRASE!,
    signingKey: config.signingKey, allowPrivateWebhookUrls: config.env !== 'production',
  });
  const stop = () => void worker.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
