// Applies optimization recommendations on their own every `intervalSeconds`, forever, for every deployment whose
// policy has autoApply on: one activity a pass (all I/O there), a durable timer between passes, and
// continue-as-new after PASSES_PER_RUN passes so the history stays short. One workflow for all deployments,
// as alert evaluation is (workflows/alerts/workflow.ts): one thing to watch, one timer.
import { ActivityFailure, continueAsNew, log, proxyActivities, sleep } from '@temporalio/workflow';
import type { OptimizationInput } from '../contract/optimization.ts';
import type { OptimizationActivities } from './activities.ts';

const PASSES_PER_RUN = 200;

const { autoApplyRecommendations } = proxyActivities<OptimizationActivities>({
  startToCloseTimeout: '5 minutes',
  // A pass that keeps failing (Prometheus or the database away) gives way to the next one.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

export async function optimizationWorkflow(input: OptimizationInput): Promise<void> {
  for (let pass = 0; pass < PASSES_PER_RUN; pass++) {
    try {
      await autoApplyRecommendations();
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      log.warn('optimization pass failed; the next pass tries again', { error: error.cause?.message ?? error.message });
    }
    await sleep(input.intervalSeconds * 1000);
  }
  await continueAsNew<typeof optimizationWorkflow>(input);
}
