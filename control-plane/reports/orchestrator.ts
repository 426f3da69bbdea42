// Starts a report's workflow (id = report id, so starting twice is refused by Temporal rather than run twice).
import type { Client } from '@temporalio/client';
import { REPORT_WORKFLOW, REPORTS_TASK_QUEUE, type ReportWorkflowInput } from '../../workflows/contract/reports.ts';

export function createReportOrchestrator(client: Client) {
  return {
    async start(reportId: string): Promise<void> {
      await client.workflow.start(REPORT_WORKFLOW, { workflowId: reportId, taskQueue: REPORTS_TASK_QUEUE, args: [{ reportId } satisfies ReportWorkflowInput] });
    },
  };
}

export type ReportOrchestrator = ReturnType<typeof createReportOrchestrator>;
