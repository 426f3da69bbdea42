// Workflow code bundled into every queue's workflows (workflow-bundle.ts): reports how each workflow run ended
// through a sink, so the worker, outside the sandbox, counts it (metrics.ts). Workflow code itself stays
// deterministic: a sink call is no command, and is not made again when history is replayed.
import { ContinueAsNew, isCancellation, proxySinks, TemporalFailure, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

/**
 * completed, failed (a failure that fails the run), cancelled, continued_as_new; task_failed: an error that is
 * no Temporal failure, which fails the workflow task alone (Temporal retries it), counted at each attempt.
 */
export type WorkflowOutcome = 'completed' | 'failed' | 'cancelled' | 'continued_as_new' | 'task_failed';

export interface OutcomeSinks extends Sinks {
  outcomes: { ended(outcome: WorkflowOutcome): void };
}

const { outcomes } = proxySinks<OutcomeSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [{
    async execute(input, next) {
      try {
        const result = await next(input);
        outcomes.ended('completed');
        return result;
      } catch (error) {
        outcomes.ended(error instanceof ContinueAsNew ? 'continued_as_new'
          : isCancellation(error) ? 'cancelled'
            : error instanceof TemporalFailure ? 'failed' : 'task_failed');
        throw error;
      }
    },
  }],
});
