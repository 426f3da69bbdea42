// The worker keeps the evaluation workflow running: started once, found running by every later start (any
// number of workers may call this).
import type { Client } from '@temporalio/client';
import { ALERT_EVALUATION_WORKFLOW, ALERT_EVALUATION_WORKFLOW_ID, ALERTS_TASK_QUEUE, type AlertEvaluationInput } from '../contract/alerts.ts';

export async function ensureAlertEvaluation(client: Client, input: AlertEvaluationInput): Promise<void> {
  await client.workflow.start(ALERT_EVALUATION_WORKFLOW, {
    workflowId: ALERT_EVALUATION_WORKFLOW_ID, taskQueue: ALERTS_TASK_QUEUE, args: [input], workflowIdConflictPolicy: 'USE_EXISTING',
  });
}
