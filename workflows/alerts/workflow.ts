// Evaluates every organization's alert rules every `intervalSeconds`, forever: one activity a pass (all I/O
// there), a durable timer between passes, and continue-as-new after PASSES_PER_RUN passes so the history
// stays short. One workflow for all organizations rather than one each: a pass asks Prometheus once per
// organization and figure whatever the number of rules, reads the rules in one query and writes their states
// in one statement, and there is one thing to watch in the Temporal UI; per-organization workflows would
// multiply timers, histories and database round trips by the number of tenants for the same queries.
import { ActivityFailure, continueAsNew, log, proxyActivities, sleep } from '@temporalio/workflow';
import type { AlertEvaluationInput } from '../contract/alerts.ts';
import type { AlertActivities } from './activities.ts';

const PASSES_PER_RUN = 500;

const { evaluateAlertRules } = proxyActivities<AlertActivities>({
  startToCloseTimeout: '2 minutes',
  // A pass that keeps failing (Prometheus or the database away) gives way to the next one.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

export async function alertEvaluationWorkflow(input: AlertEvaluationInput): Promise<void> {
  for (let pass = 0; pass < PASSES_PER_RUN; pass++) {
    try {
      await evaluateAlertRules();
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      log.warn('alert evaluation pass failed; the next pass tries again', { error: error.cause?.message ?? error.message });
    }
    await sleep(input.intervalSeconds * 1000);
  }
  await continueAsNew<typeof alertEvaluationWorkflow>(input);
}
