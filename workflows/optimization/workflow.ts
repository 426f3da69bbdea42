// One pass of optimization auto-apply, started by the optimization schedule (workflows/schedules.ts) every
// KILN_OPTIMIZATION_INTERVAL_SECONDS: one activity (all I/O there) applies the recommendations of every deployment
// whose policy has autoApply on, as alert evaluation does for rules (workflows/alerts/workflow.ts). A pass that
// keeps failing (Prometheus or the database away) fails its run; the schedule's next run tries again.
import { proxyActivities } from '@temporalio/workflow';
import type { OptimizationPassResult } from '../contract/optimization.ts';
import type { OptimizationActivities } from './activities.ts';

const { autoApplyRecommendations } = proxyActivities<OptimizationActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

export async function optimizationWorkflow(): Promise<OptimizationPassResult> {
  return autoApplyRecommendations();
}
