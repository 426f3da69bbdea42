// The one rule for calling Temporal: a request never waits on it. While the dependency monitor
// (health/dependencies.ts) says Temporal is unavailable, a call is refused at once; otherwise it is bounded by a
// deadline short enough that the request stays under a second. Every orchestrator calls Temporal through this;
// what a refused change needs (a desired state, a report's start) is saved and delivered later by its area's
// loop, which calls with the longer background deadline.
import type { Client } from '@temporalio/client';
import { ServiceUnavailableError } from './errors.ts';

/** A request's call to Temporal: the whole request stays under a second. */
export const REQUEST_DEADLINE_MS = 700;
/**
 * A request that waits on a workflow anyway (a dry run's preview, a wake the inference request is held for):
 * still refused at once while Temporal is away, but not failed by a slow start.
 */
export const HELD_REQUEST_DEADLINE_MS = 3_000;
/** A background loop's call (redelivery): nobody waits on it. */
export const BACKGROUND_DEADLINE_MS = 10_000;

/** Temporal is unavailable (the monitor says so, or it did not answer within the deadline): retry shortly. */
export class WorkflowServiceUnavailableError extends ServiceUnavailableError {
  constructor(message = 'The workflow service is unavailable: try again shortly') {
    super(message, { dependency: 'temporal' }, { 'Retry-After': '5' });
  }
}

export interface WorkflowCallOptions {
  /** Whether Temporal answers now (the dependency monitor's last probe); always, when absent (tests, scripts). */
  readonly temporalAvailable?: () => boolean;
}

export type WorkflowCall = <T>(work: (client: Client) => Promise<T>, deadlineMs?: number) => Promise<T>;

/**
 * Calls `work` with the client within `deadlineMs` (REQUEST_DEADLINE_MS when absent); a
 * WorkflowServiceUnavailableError at once while the monitor says Temporal is unavailable. Temporal's own
 * answers (a workflow not found, one already started) come through as they are.
 */
export function workflowCalls(client: Client, options: WorkflowCallOptions = {}): WorkflowCall {
  return async (work, deadlineMs = REQUEST_DEADLINE_MS) => {
    if (options.temporalAvailable && !options.temporalAvailable()) throw new WorkflowServiceUnavailableError();
    return client.withDeadline(Date.now() + deadlineMs, () => work(client));
  };
}
