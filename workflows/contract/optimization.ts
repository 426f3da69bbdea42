// Contract of optimization auto-apply: a Temporal Schedule (id OPTIMIZATION_SCHEDULE_ID, made by the worker,
// workflows/schedules.ts) starts one pass over every deployment whose policy has autoApply on each
// KILN_OPTIMIZATION_INTERVAL_SECONDS.
export const OPTIMIZATION_TASK_QUEUE = 'kiln-optimization';
export const OPTIMIZATION_WORKFLOW = 'optimizationWorkflow';
export const OPTIMIZATION_SCHEDULE_ID = 'kiln-optimization';

/** What one pass did, as the activity answers it (visible in the workflow's history). */
export interface OptimizationPassResult {
  /** Running deployments with autoApply on and no change by auto-apply within the last hour. */
  readonly candidates: number;
  /** Deployments changed in this pass (one recommendation each). */
  readonly applied: number;
  readonly passMs: number;
}
