// Contract of report generation: one workflow per report, id = the report id (`rpt_...`), so an SRE finds
// it in the Temporal UI by the id the administrator sees.
export const REPORTS_TASK_QUEUE = 'kiln-reports';
export const REPORT_WORKFLOW = 'reportWorkflow';

/** The id only: kind and window are read from the report's row by the activity. */
export interface ReportWorkflowInput {
  readonly reportId: string;
}

export interface ReportWorkflowResult {
  readonly status: 'ready' | 'failed';
  readonly rows?: number;
  readonly error?: string;
}
