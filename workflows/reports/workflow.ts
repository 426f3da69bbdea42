// Writes one CSV report. The activity does the work (it is safe to retry: it rewrites the file from the
// start); when it has failed for good the report is marked failed with the reason, so the administrator
// polling GET /v1/admin/reports/{id} sees why.
import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { ReportWorkflowInput, ReportWorkflowResult } from '../contract/reports.ts';
import type { ReportActivities } from './activities.ts';

const { writeReport } = proxyActivities<ReportActivities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 3, nonRetryableErrorTypes: ['ReportNotFound'] },
});

const { markReportFailed } = proxyActivities<ReportActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export async function reportWorkflow(input: ReportWorkflowInput): Promise<ReportWorkflowResult> {
  try {
    const { rows } = await writeReport(input);
    return { status: 'ready', rows };
  } catch (error) {
    const cause = error instanceof ActivityFailure && error.cause ? error.cause : error;
    const reason = cause instanceof Error ? cause.message : String(cause);
    await markReportFailed(input, reason);
    return { status: 'failed', error: reason };
  }
}
