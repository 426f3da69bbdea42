// Contract of alert evaluation: a Temporal Schedule (id ALERT_EVALUATION_SCHEDULE_ID, made by the worker,
// workflows/schedules.ts) starts one pass over every organization's rules each KILN_ALERT_INTERVAL_SECONDS.
export const ALERTS_TASK_QUEUE = 'kiln-alerts';
export const ALERT_EVALUATION_WORKFLOW = 'alertEvaluationWorkflow';
export const ALERT_EVALUATION_SCHEDULE_ID = 'kiln-alert-evaluation';

/** What one evaluation pass did, as the activity answers it (visible in the workflow's history). */
export interface AlertEvaluationResult {
  readonly rules: number;
  readonly fired: number;
  readonly resolved: number;
  /** Deployments a reached budget with action `stop` stopped in this pass. */
  readonly stopped: number;
  /** Alert events whose webhook deliveries were started (or skipped, silenced). */
  readonly dispatched: number;
  readonly evaluationMs: number;
}
