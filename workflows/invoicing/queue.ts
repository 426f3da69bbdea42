// The kiln-invoicing task queue: the monthly close the invoicing schedule starts.
import { heartbeat } from '@temporalio/activity';
import { INVOICING_TASK_QUEUE } from '../contract/invoicing.ts';
import type { QueueModule, WorkerDeps } from '../queue.ts';
import { createInvoicingActivities } from './activities.ts';
import { invoicingStore } from './store.ts';

export const invoicingQueue = {
  taskQueue: INVOICING_TASK_QUEUE,
  workflowsPath: new URL('./workflow.ts', import.meta.url).pathname,
  activities: ({ orm }: Pick<WorkerDeps, 'orm'>) => createInvoicingActivities({ store: invoicingStore(orm), progress: () => heartbeat() }),
} satisfies QueueModule;
