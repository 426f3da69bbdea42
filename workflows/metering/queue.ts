// The kiln-metering task queue: the runs the metering schedule starts.
import { heartbeat } from '@temporalio/activity';
import { METERING_TASK_QUEUE } from '../contract/metering.ts';
import type { QueueModule, WorkerDeps } from '../queue.ts';
import { createMeteringActivities } from './activities.ts';
import { meteringStore } from './store.ts';

export const meteringQueue = {
  taskQueue: METERING_TASK_QUEUE,
  workflowsPath: new URL('./workflow.ts', import.meta.url).pathname,
  activities: ({ orm, metering }: Pick<WorkerDeps, 'orm' | 'metering'>) => createMeteringActivities({ store: meteringStore(orm), ...metering, progress: () => heartbeat() }),
} satisfies QueueModule;
