// Pulumi operations run by an activity, the same way for deployments and clusters: a heartbeat with each line
// of progress and every few seconds between them (the engine can be silent for minutes while a resource
// settles, and the heartbeat says the worker lives, so a killed worker's operation is retried within the
// heartbeat timeout), a stop when Temporal cancels the activity, and failures mapped to what Temporal should do next.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { OutputMap } from '@pulumi/pulumi/automation/index.js';
import { runStackOperation, type IsolatedStackRequest, type PlannedStep, type ProgramRef, type PulumiSettings, type StackOperation } from './automation.ts';

/** How often a running operation heartbeats though Pulumi printed nothing: well inside any heartbeat timeout. */
const HEARTBEAT_INTERVAL_MS = 5_000;

/** Destroy needs a program only to open the stack; this one declares nothing. */
export const EMPTY_PROGRAM: ProgramRef = { programModule: new URL('./empty-program.ts', import.meta.url).href, programExport: 'emptyProgram', programInput: null };

/** Runs a stack's rule check; a target that breaks one fails for good as `type` (only fixing the request cures it). */
export function refuseInvalid(check: () => void, type: string): void {
  try {
    check();
  } catch (error) {
    throw ApplicationFailure.nonRetryable((error as Error).message, type);
  }
}

/**
 * Runs the operation for the current activity. A failure as Temporal should see it: cancelled when the activity
 * was cancelled (no retry or failure follows); not worth a retry when a resource plugin is missing (retrying
 * cannot install it, and every failed deployment attempt counts against its provisioning circuit).
 */
export async function runActivityOperation(
  settings: PulumiSettings, request: IsolatedStackRequest, operation: StackOperation, onStep?: (step: PlannedStep) => void,
): Promise<OutputMap> {
  const context = Context.current();
  let lastLine: string | undefined;
  const alive = setInterval(() => context.heartbeat(lastLine), HEARTBEAT_INTERVAL_MS);
  try {
    return await runStackOperation(settings, request, operation, {
      signal: context.cancellationSignal, onStep,
      onProgress: (line) => { lastLine = line; context.heartbeat(line); },
    });
  } catch (error) {
    if (context.cancellationSignal.aborted) throw new CancelledFailure(`cancelled: ${String(context.cancellationSignal.reason)}`);
    const message = (error as Error).message;
    if (/no resource plugin/i.test(message)) throw ApplicationFailure.nonRetryable(message, 'PluginMissing');
    throw error;
  } finally {
    clearInterval(alive);
  }
}
