// The kiln-optimization task queue: the one workflow that applies deployments' cost-saving recommendations on a schedule.
import { namespaceOf } from '../contract/deployment.ts';
import { OPTIMIZATION_TASK_QUEUE } from '../contract/optimization.ts';
import type { QueueModule, WorkerDeps } from '../queue.ts';
import { createOptimizationActivities } from './activities.ts';
import { optimizationStore } from './store.ts';

export const optimizationQueue = {
  taskQueue: OPTIMIZATION_TASK_QUEUE,
  workflowsPath: new URL('./workflow.ts', import.meta.url).pathname,
  activities: ({ orm, prometheus }: Pick<WorkerDeps, 'orm' | 'prometheus'>) => createOptimizationActivities({ store: optimizationStore(orm), prometheus, namespaceOf }),
} satisfies QueueModule;
