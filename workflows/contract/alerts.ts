// Contract of alert evaluation: one workflow for every organization's rules, id ALERT_EVALUATION_WORKFLOW_ID,
// started by the worker (workflows/worker.ts) and kept running (timers, then continue-as-new).
export const ALERTS_TASK_QUEUE = 'kiln-alerts';
export const ALERT_EVALUATION_WORKFLOW = 'alertEvaluationWorkflow';
export const ALERT_EVALUATION_WORKFLOW_ID = 'kiln-alert-evaluation';

export interface AlertEvaluationInput {
  /** Seconds between two evaluations of every rule. */
  readonly intervalSeconds: number;
}

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
