// The Temporal worker of the `kiln-deployments` task queue: deployment workflows and their activities.
// `npm run worker` runs one from the environment; infra/start.ts runs one beside the API with startWorker().
import { join, resolve } from 'node:path';
import { readFile } from 'node:fs/promises';
import { NativeConnection, Worker } from '@temporalio/worker';
import { openDatabase } from '../control-plane/database/orm.ts';
import { credentialsFromKubeconfig, kubeApi } from '../infra/servers/kube-api.ts';
import { DEPLOYMENTS_TASK_QUEUE } from './contract/deployment.ts';
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
}

export interface RunningWorker {
  stop(): Promise<void>;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const orm = await openDatabase(options.databaseUrl, { migrate: false });
  const kubeconfig = await readFile(options.kubeconfig, 'utf8');
  const api = kubeApi(await credentialsFromKubeconfig(options.kubeconfig));
  const activities = createDeploymentActivities({
    pulumi: {
      backendUrl: options.pulumiBackendUrl ?? `file://${join(options.dataDir, 'pulumi-state')}`,
      passphrase: options.pulumiPassphrase,
      workspacesDir: join(options.dataDir, 'pulumi-workspaces'),
    },
    programFor: (target) => deploymentProgramRef(target, { kubeconfig }),
    check: checkDeployment,
    statuses: createStatusStore(orm),
    readiness: kubernetesReadiness(api, namespaceOf),
  });
  const connection = await NativeConnection.connect({ address: options.temporalAddress });
  const worker = await Worker.create({
    connection,
    taskQueue: DEPLOYMENTS_TASK_QUEUE,
    workflowsPath: new URL('./deployment/workflow.ts', import.meta.url).pathname,
    activities,
  });
  const running = worker.run();
  return {
    async stop() {
      worker.shutdown();
      await running;
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
  const worker = await startWorker({
    temporalAddress: env.TEMPORAL_ADDRESS!, databaseUrl: env.DATABASE_URL!, kubeconfig: env.KUBECONFIG!,
    dataDir: resolve(env.DATA_DIR ?? '.data'), pulumiBackendUrl: env.PULUMI_BACKEND_URL, pulumiPassphrase: env.PULUMI_CONFIG_PASSPHRASE!,
  });
  const stop = () => void worker.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
