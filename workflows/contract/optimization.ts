// Contract of optimization auto-apply: one workflow for every deployment whose policy has autoApply on, id
// OPTIMIZATION_WORKFLOW_ID, started by the worker (workflows/worker.ts) and kept running (timers,
// then continue-as-new).
export const OPTIMIZATION_TASK_QUEUE = 'kiln-optimization';
export const OPTIMIZATION_WORKFLOW = 'optimizationWorkflow';
export const OPTIMIZATION_WORKFLOW_ID = 'kiln-optimization';

export interface OptimizationInput {
  /** Seconds between two passes over the deployments. */
  readonly intervalSeconds: number;
}

/** What one pass did, as the activity answers it (visible in the workflow's history). */
export interface OptimizationPassResult {
  /** Running deployments with autoApply on and no change by auto-apply within the last hour. */
  readonly candidates: number;
  /** Deployments changed in this pass (one recommendation each). */
  readonly applied: number;
  readonly passMs: number;
}
