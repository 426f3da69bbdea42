// The kiln-alerts task queue: the one workflow that evaluates every organization's alert rules on a schedule.
import { rateWindowSeconds } from '../../lib/prometheus/deployment-metrics.ts';
import { ALERTS_TASK_QUEUE } from '../contract/alerts.ts';
import { namespaceOf } from '../contract/deployment.ts';
import type { QueueModule, WorkerDeps } from '../queue.ts';
import { webhookDeliveries } from '../webhooks/store.ts';
import { createAlertActivities } from './activities.ts';
import { alertStore } from './store.ts';

export const alertsQueue = {
  taskQueue: ALERTS_TASK_QUEUE,
  workflowsPath: new URL('./workflow.ts', import.meta.url).pathname,
  activities: ({ orm, client, prometheus, alertIntervalSeconds }: Pick<WorkerDeps, 'orm' | 'client' | 'prometheus' | 'alertIntervalSeconds'>) => createAlertActivities({
    store: alertStore(orm), prometheus, deliveries: webhookDeliveries(orm, client), namespaceOf,
    windowSeconds: rateWindowSeconds(alertIntervalSeconds),
  }),
} satisfies QueueModule;
