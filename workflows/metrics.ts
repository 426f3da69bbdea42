// The worker process's own metrics: Pulumi operation durations (pulumi/automation.ts), webhook delivery results
// (webhooks/activities.ts), every activity's outcome (an interceptor queue.ts gives each worker) and every
// workflow run's (reported from the sandbox through a sink, workflow-interceptors.ts), on one
// registry per process, made on first use, so Pulumi's operation processes, which import the same files,
// make none. The worker serves them on a small listener of its own (serveWorkerMetrics, started by worker.ts
// when KILN_METRICS_TOKEN is set). Workflow code never counts: it must stay deterministic and free of I/O.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CancelledFailure, type Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { Counter, Histogram, type Registry } from 'prom-client';
import { createMetricsRegistry, METRICS_CONTENT_TYPE, metricsTokenMatches } from '../lib/metrics.ts';
import type { OutcomeSinks } from './workflow-interceptors.ts';

/** From a preview of a few seconds to a cluster's creation of half an hour. */
const PULUMI_BUCKETS = [1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 2400];

export type PulumiOutcome = 'succeeded' | 'failed' | 'aborted';
/** delivered: 2xx; refused: a 4xx not worth retrying; failed: any other answer or none; blocked: a private address; gone: the subscription was deleted. */
export type WebhookOutcome = 'delivered' | 'refused' | 'failed' | 'blocked' | 'gone';
export type ActivityOutcome = 'completed' | 'failed' | 'cancelled';

function createWorkerMetrics() {
  const registry = createMetricsRegistry();
  const registers = [registry];
  return {
    registry,
    pulumiOperations: new Histogram({
      name: 'kiln_pulumi_operation_duration_seconds', help: 'Pulumi operations (up, refresh, preview, destroy) run by this worker, by operation and outcome.',
      labelNames: ['operation', 'outcome'] as const, buckets: PULUMI_BUCKETS, registers,
    }),
    pulumiCpu: new Histogram({
      name: 'kiln_pulumi_operation_cpu_seconds', help: 'CPU-seconds (user and system) each Pulumi operation cost: its operation process once the program was loaded, with the Pulumi CLI and plugin processes it ran.',
      labelNames: ['operation'] as const, buckets: [0.25, 0.5, 1, 2, 4, 8, 16, 60], registers,
    }),
    pulumiLoadCpu: new Counter({
      name: 'kiln_pulumi_process_load_cpu_seconds_total', help: 'CPU-seconds operation processes spent before their operations\' programs were loaded: a fresh process\'s start and Pulumi\'s SDKs, a program\'s modules the first time.',
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'kiln_webhook_deliveries_total', help: 'Webhook delivery attempts, by outcome (delivered, refused, failed, blocked, gone).',
      labelNames: ['outcome'] as const, registers,
    }),
    workflows: new Counter({
      name: 'kiln_workflow_outcomes_total', help: 'Workflow runs ended on this worker, by task queue, workflow and outcome (completed, failed, cancelled, continued_as_new; task_failed per failed workflow task).',
      labelNames: ['task_queue', 'workflow', 'outcome'] as const, registers,
    }),
    activities: new Counter({
      name: 'kiln_workflow_activity_outcomes_total', help: 'Activity executions of Kiln\'s workflows, by task queue, activity and outcome (completed, failed, cancelled).',
      labelNames: ['task_queue', 'activity', 'outcome'] as const, registers,
    }),
  };
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;

let metrics: WorkerMetrics | undefined;
/** This process's worker metrics. */
export function workerMetrics(): WorkerMetrics {
  return (metrics ??= createWorkerMetrics());
}

/** Counts each activity's outcome; a Temporal worker interceptor (queue.ts createQueueWorker). */
export const activityOutcomes: ActivityInterceptorsFactory = (context: Context) => ({
  inbound: {
    async execute(input, next) {
      const { taskQueue, activityType } = context.info;
      const count = (outcome: ActivityOutcome) => workerMetrics().activities.inc({ task_queue: taskQueue, activity: activityType, outcome });
      try {
        const result = await next(input);
        count('completed');
        return result;
      } catch (error) {
        count(error instanceof CancelledFailure || context.cancellationSignal.aborted ? 'cancelled' : 'failed');
        throw error;
      }
    },
  },
});

/** The worker's side of workflow-interceptors.ts: each run's outcome, counted; never again on replay. */
export const workflowOutcomes: InjectedSinks<OutcomeSinks> = {
  outcomes: {
    ended: {
      fn: (info, outcome) => workerMetrics().workflows.inc({ task_queue: info.taskQueue, workflow: info.workflowType, outcome }),
      callDuringReplay: false,
    },
  },
};

export interface MetricsListener {
  readonly port: number;
  close(): Promise<void>;
}

const refusal = (status: number, error: string, message: string, code: string) => JSON.stringify({ error, message, code, statusCode: status });

/**
 * GET /metrics/internal of this process's registry, for a scraper sending `Bearer <token>` (compared in
 * constant time); anything else is answered in the reference API's error format.
 */
export async function serveWorkerMetrics(options: { token: string; port: number; host?: string; registry?: Registry }): Promise<MetricsListener> {
  const registry = options.registry ?? workerMetrics().registry;
  const server = createServer((req, res) => {
    const answer = (status: number, type: string, body: string) => res.writeHead(status, { 'content-type': type }).end(body);
    const path = new URL(req.url ?? '/', 'http://worker').pathname;
    if (path !== '/metrics/internal') return answer(404, 'application/json', refusal(404, 'Not Found', 'Not found', 'NOT_FOUND'));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return answer(405, 'application/json', refusal(405, 'Method Not Allowed', 'Method not allowed', 'METHOD_NOT_ALLOWED'));
    }
    if (!metricsTokenMatches(req.headers.authorization ?? '', options.token)) {
      return answer(401, 'application/json', refusal(401, 'Unauthorized', 'Invalid metrics token', 'INVALID_API_KEY'));
    }
    registry.metrics().then(
      (text) => answer(200, METRICS_CONTENT_TYPE, text),
      (error: Error) => answer(500, 'application/json', refusal(500, 'Internal Server Error', `metrics failed: ${error.message}`, 'INTERNAL_ERROR')),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (options.host === undefined) server.listen(options.port, resolve);
    else server.listen(options.port, options.host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
