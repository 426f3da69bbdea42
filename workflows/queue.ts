// What a task queue brings to the worker: its name, the file exporting its workflows, and its activities built
// from the dependencies the worker shares. Each workflow area exports one (deployment/queue.ts,
// webhooks/queue.ts, reports/queue.ts); worker.ts lists them, and tests build a queue's Worker the same way.
import type { Client } from '@temporalio/client';
import { Runtime, Worker, type NativeConnection } from '@temporalio/worker';
import type { Orm } from '../control-plane/database/orm.ts';
import type { PrometheusClient } from '../lib/prometheus/client.ts';
import { activityOutcomes, workflowOutcomes } from './metrics.ts';
import type { PulumiSettings } from './pulumi/automation.ts';
import type { Logger } from 'pino';
import type { MeteringSettings } from './contract/metering.ts';
import { workflowBundle } from './workflow-bundle.ts';

export interface WorkerDeps {
  readonly orm: Orm;
  /** The worker's logger: lifecycle edges are logged to it (none when absent). */
  readonly log?: Logger;
  /** Starts workflows from activities (webhook deliveries of recorded events). */
  readonly client: Client;
  /** Kiln's signing secret (KILN_SIGNING_KEY): unseals webhook signing secrets and cluster kubeconfigs. */
  readonly signingKey: string;
  /** Opens organizations' secrets (KILN_SECRETS_KEY and the previous keys); derived from the signing key when absent. */
  readonly secretsKeys?: { readonly current: string; readonly previous: readonly string[] };
  readonly pulumi: PulumiSettings;
  /** Development delivers webhooks to loopback and private addresses; production refuses them. */
  readonly allowPrivateWebhookUrls: boolean;
  /** The Prometheus the autoscaler and the alert rules query (PROMETHEUS_URL). */
  readonly prometheus: PrometheusClient;
  /** How often the autoscaler measures a deployment's load (KILN_AUTOSCALE_INTERVAL_SECONDS). */
  readonly autoscaleIntervalMs: number;
  /** How long pods may stay unschedulable before their deployment fails (KILN_UNSCHEDULABLE_GRACE_SECONDS). */
  readonly unschedulableGraceMs: number;
  /** How long a node of a local cluster's pool may run no Kiln replica before it is removed (KILN_POOL_IDLE_SECONDS). */
  readonly poolIdleMs?: number;
  /** Seconds between two passes of alert evaluation (KILN_ALERT_INTERVAL_SECONDS). */
  readonly alertIntervalSeconds: number;
  /** Metering's interval, settling time and the credits' grace period. */
  readonly metering: MeteringSettings;
}

export interface QueueModule {
  readonly taskQueue: string;
  /** The workflow file of the queue: every workflow it exports runs here. */
  readonly workflowsPath: string;
  activities(deps: WorkerDeps): object;
}

export interface QueueWorkerOptions {
  readonly connection: NativeConnection;
  /** Where workflow bundles are kept between starts (DATA_DIR/workflow-bundles). */
  readonly bundleDir: string;
  readonly activities: object;
  /** The queue's own name when absent; tests give each test a queue of its own. */
  readonly taskQueue?: string;
}

export async function createQueueWorker(queue: QueueModule, options: QueueWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    taskQueue: options.taskQueue ?? queue.taskQueue,
    workflowBundle: { codePath: await workflowBundle(queue.workflowsPath, options.bundleDir, Runtime.instance().logger) },
    activities: options.activities,
    // Each activity's and each workflow run's outcome is counted in the worker's metrics (workflows/metrics.ts).
    interceptors: { activity: [activityOutcomes] },
    sinks: workflowOutcomes,
  });
}
