// Starts a report's workflow (id = report id, never reused: starting twice is refused by Temporal rather than run twice),
// through the one rule for calling Temporal (core/workflow-calls.ts): refused at once while it is away.
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { REPORT_WORKFLOW, REPORTS_TASK_QUEUE, type ReportWorkflowInput } from '../../workflows/contract/reports.ts';
import { workflowCalls, type WorkflowCallOptions } from '../core/workflow-calls.ts';

export function createReportOrchestrator(client: Client, options: WorkflowCallOptions = {}) {
  const call = workflowCalls(client, options);
  return {
    /** Resolves once the workflow runs (started now, or already by an earlier start); `deadlineMs`: a request's when absent. */
    async start(reportId: string, deadlineMs?: number): Promise<void> {
      try {
        await call((temporal) => temporal.workflow.start(REPORT_WORKFLOW, {
          workflowId: reportId, taskQueue: REPORTS_TASK_QUEUE, args: [{ reportId } satisfies ReportWorkflowInput], workflowIdReusePolicy: 'REJECT_DUPLICATE',
        }), deadlineMs);
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    },
  };
}

export type ReportOrchestrator = ReturnType<typeof createReportOrchestrator>;
