// The worker keeps the optimization workflow running: started once, found running by every later start (any
// number of workers may call this).
import type { Client } from '@temporalio/client';
import { OPTIMIZATION_TASK_QUEUE, OPTIMIZATION_WORKFLOW, OPTIMIZATION_WORKFLOW_ID, type OptimizationInput } from '../contract/optimization.ts';

export async function ensureOptimization(client: Client, input: OptimizationInput): Promise<void> {
  await client.workflow.start(OPTIMIZATION_WORKFLOW, {
    workflowId: OPTIMIZATION_WORKFLOW_ID, taskQueue: OPTIMIZATION_TASK_QUEUE, args: [input], workflowIdConflictPolicy: 'USE_EXISTING',
  });
}
