// The Temporal worker of Kiln's task queues: deployments, webhook deliveries, reports, alert evaluation, optimization auto-apply, metering and invoicing.
// `npm run worker` runs one from the environment; infra/start.ts runs one beside the API with startWorker().
import { join } from 'node:path';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { LogLevel } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { pino, type Logger } from 'pino';
import { exitOnConfigError, exitOnSignals, loadConfig, type WorkerConfig } from '../control-plane/config.ts';
import { openDatabase } from '../control-plane/database/orm.ts';
import { alertsQueue } from './alerts/queue.ts';
import { deploymentsQueue } from './deployment/queue.ts';
import { serveWorkerMetrics, type MetricsListener } from './metrics.ts';
import { optimizationQueue } from './optimization/queue.ts';
import { createQueueWorker, type QueueModule, type WorkerDeps } from './queue.ts';
import { invoicingQueue } from './invoicing/queue.ts';
import { meteringQueue } from './metering/queue.ts';
import { reportsQueue } from './reports/queue.ts';
import { ensureSchedule, type KilnSchedule } from './schedules.ts';
import { webhooksQueue } from './webhooks/queue.ts';
import { createPrometheusClient } from '../lib/prometheus/client.ts';
import { ALERT_EVALUATION_SCHEDULE_ID, ALERT_EVALUATION_WORKFLOW, ALERTS_TASK_QUEUE } from './contract/alerts.ts';
import { OPTIMIZATION_SCHEDULE_ID, OPTIMIZATION_TASK_QUEUE, OPTIMIZATION_WORKFLOW } from './contract/optimization.ts';
import { METERING_SCHEDULE_ID, METERING_TASK_QUEUE, METERING_WORKFLOW } from './contract/metering.ts';
import { INVOICING_CRON, INVOICING_SCHEDULE_ID, INVOICING_TASK_QUEUE, INVOICING_WORKFLOW } from './contract/invoicing.ts';
import { closePulumiOperations } from './pulumi/automation.ts';

/** Every task queue one worker process polls. */
/**
 * The ids of the long-lived alert and optimization workflows of the versions before their schedules (2026-11-27):
 * an installation that ran one still may. Can go once every installation has started a worker of that day's or later.
 */
const LOOP_WORKFLOW_IDS_BEFORE_SCHEDULES = ['kiln-alert-evaluation', 'kiln-optimization'];

export const QUEUES: readonly QueueModule[] = [deploymentsQueue, webhooksQueue, reportsQueue, alertsQueue, optimizationQueue, meteringQueue, invoicingQueue];

export interface RunningWorker {
  /** Port of the worker's GET /metrics/internal; undefined without KILN_METRICS_TOKEN. */
  readonly metricsPort: number | undefined;
  stop(): Promise<void>;
}

const PINO_LEVEL = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const satisfies Record<LogLevel, string>;

/**
 * The SDK's own logs (its TypeScript side and its Rust core) go to the process's pino logger, from WARN up:
 * below that are state changes and bundler output nobody acts on. Once per process, before any connection.
 */
function installTemporalLogger(log: Logger): void {
  Runtime.install({
    // The SDK names a failure `error`; pino prints an Error's message and stack only under `err` (else `{}`).
    logger: new DefaultLogger('WARN', ({ level, message, meta }) => {
      const { error, ...rest } = meta ?? {};
      log[PINO_LEVEL[level]]({ ...rest, ...(error === undefined ? {} : { err: error }) }, message);
    }),
    telemetryOptions: { logging: { filter: { core: 'WARN' }, forward: {} } },
  });
}

/**
 * One process polls every queue of QUEUES. Each deployment runs on the cluster it was placed on, reached with
 * that cluster's kubeconfig.
 */
export async function startWorker(config: WorkerConfig, log: Logger = pino({ level: config.logLevel })): Promise<RunningWorker> {
  installTemporalLogger(log);
  // Activities act for every organization (statuses, events, deliveries): their queries run outside any
  // organization's scope, as the connecting user, whom row-level security does not hold (core/row-level-security.ts).
  const orm = await openDatabase(config.databaseUrl, { migrate: false });
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const client = new Client({ connection: await Connection.connect({ address: config.temporalAddress }) });
  const deps: WorkerDeps = {
    orm, client, log, signingKey: config.signingKey, secretsKeys: config.secretsKeys, allowPrivateWebhookUrls: config.allowPrivateWebhookUrls,
    prometheus: createPrometheusClient(config.prometheusUrl), autoscaleIntervalMs: config.autoscaleIntervalMs, unschedulableGraceMs: config.unschedulableGraceMs, poolIdleMs: config.poolIdleMs, alertIntervalSeconds: config.alertIntervalSeconds,
    metering: config.metering,
    pulumi: {
      backendUrl: config.pulumiBackendUrl, passphrase: config.pulumiPassphrase, workspacesDir: join(config.dataDir, 'pulumi-workspaces'),
      home: config.pulumiHome, cliRoot: config.pulumiCliRoot,
      concurrency: config.pulumiConcurrency, operationsPerProcess: config.pulumiOperationsPerProcess,
    },
  };
  const bundleDir = join(config.dataDir, 'workflow-bundles');
  const workers: Worker[] = [];
  for (const queue of QUEUES) workers.push(await createQueueWorker(queue, { connection, bundleDir, activities: queue.activities(deps) }));
  // Kiln's own metrics of this process, for a scraper holding the token; no token, no listener.
  let metrics: MetricsListener | undefined;
  if (config.metricsToken) {
    metrics = await serveWorkerMetrics({ token: config.metricsToken, port: config.metricsPort });
    log.info({ port: metrics.port }, 'worker metrics at /metrics/internal');
  }
  const running = Promise.all(workers.map((worker) => worker.run()));
  // Alert evaluation and optimization ran as one long-lived workflow each (timers, then continue-as-new) before they
  // were schedules: such a run left from then would replay against the one-pass workflows and fail; it goes.
  for (const workflowId of LOOP_WORKFLOW_IDS_BEFORE_SCHEDULES) {
    await client.workflow.getHandle(workflowId).terminate('replaced by a Temporal Schedule').catch((error: unknown) => {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    });
  }
  // The jobs that run by the clock, as Temporal Schedules (workflows/schedules.ts).
  const schedules: KilnSchedule[] = [
    {
      scheduleId: ALERT_EVALUATION_SCHEDULE_ID, spec: { intervals: [{ every: config.alertIntervalSeconds * 1000 }] },
      action: { type: 'startWorkflow', workflowType: ALERT_EVALUATION_WORKFLOW, taskQueue: ALERTS_TASK_QUEUE, args: [] },
    },
    {
      scheduleId: OPTIMIZATION_SCHEDULE_ID, spec: { intervals: [{ every: config.optimizationIntervalSeconds * 1000 }] },
      action: { type: 'startWorkflow', workflowType: OPTIMIZATION_WORKFLOW, taskQueue: OPTIMIZATION_TASK_QUEUE, args: [] },
    },
    {
      scheduleId: METERING_SCHEDULE_ID, spec: { intervals: [{ every: config.metering.intervalMs }] },
      action: { type: 'startWorkflow', workflowType: METERING_WORKFLOW, taskQueue: METERING_TASK_QUEUE, args: [] },
    },
    {
      // The monthly close: each run invoices the month before it started. A close missed while Temporal was
      // away is still made when it returns, within a week.
      scheduleId: INVOICING_SCHEDULE_ID, spec: { cronExpressions: [INVOICING_CRON] }, catchupWindow: '7 days',
      action: { type: 'startWorkflow', workflowType: INVOICING_WORKFLOW, taskQueue: INVOICING_TASK_QUEUE, args: [] },
    },
  ];
  for (const schedule of schedules) await ensureSchedule(client, schedule);
  log.info({ taskQueues: QUEUES.map((q) => q.taskQueue) }, 'worker polling');
  return {
    metricsPort: metrics?.port,
    async stop() {
      await metrics?.close();
      // On Ctrl-C the SDK has already begun shutting the workers down (it handles SIGINT itself).
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      closePulumiOperations();
      await client.connection.close();
      await connection.close();
      await orm.close();
    },
  };
}

if (import.meta.main) {
  const config = await loadConfig('worker').catch(exitOnConfigError);
  const worker = await startWorker(config);
  exitOnSignals(() => worker.stop());
}
