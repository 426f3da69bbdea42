// The kiln-reports task queue: one workflow per report, writing its CSV into PostgreSQL.
import { REPORTS_TASK_QUEUE } from '../contract/reports.ts';
import type { QueueModule, WorkerDeps } from '../queue.ts';
import { createReportActivities } from './activities.ts';
import { reportStore } from './store.ts';

export const reportsQueue = {
  taskQueue: REPORTS_TASK_QUEUE,
  workflowsPath: new URL('./workflow.ts', import.meta.url).pathname,
  activities: ({ orm }: Pick<WorkerDeps, 'orm'>) => createReportActivities({ store: reportStore(orm) }),
} satisfies QueueModule;
