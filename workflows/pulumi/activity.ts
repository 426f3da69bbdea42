// Pulumi operations run by an activity, the same way for deployments and clusters: a heartbeat with each line
// of progress and every few seconds between them (the engine can be silent for minutes while a resource
// settles, and the heartbeat says the worker lives, so a killed worker's operation is retried within the
// heartbeat timeout), a stop when Temporal cancels the activity, and failures mapped to what Temporal should do next.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { OutputMap } from '@pulumi/pulumi/automation/index.js';
import { runStackOperation, type IsolatedStackRequest, type PlannedStep, type ProgramRef, type PulumiSettings, type StackOperation } from './automation.ts';
import { describeDrift } from './drift.ts';

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

/** What an operation answers: the stack's outputs, and the drift it found (and, for an up, put back), a line per field. */
export interface ActivityOperationResult {
  readonly outputs: OutputMap;
  readonly drift: string[];
}

/**
 * Runs the operation for the current activity. Drift is logged as it is found and answered, so the activity's
 * result in the Temporal UI says what was changed out of band. A failure as Temporal should see it: cancelled
 * when the activity was cancelled (no retry or failure follows); not worth a retry when a resource plugin is
 * missing (retrying cannot install it, and every failed deployment attempt counts against its provisioning circuit).
 */
export async function runActivityOperation(
  settings: PulumiSettings, request: IsolatedStackRequest, operation: StackOperation, onStep?: (step: PlannedStep) => void,
): Promise<ActivityOperationResult> {
  const context = Context.current();
  let lastLine: string | undefined;
  const drift: string[] = [];
  const alive = setInterval(() => context.heartbeat(lastLine), HEARTBEAT_INTERVAL_MS);
  try {
    const outputs = await runStackOperation(settings, request, operation, {
      signal: context.cancellationSignal, onStep,
      onProgress: (line) => { lastLine = line; context.heartbeat(line); },
      onDrift: (found) => {
        const line = describeDrift(found);
        drift.push(line);
        context.log.warn(`drift in stack ${request.stackName}: ${line}`);
      },
    });
    return { outputs, drift };
  } catch (error) {
    if (context.cancellationSignal.aborted) throw new CancelledFailure(`cancelled: ${String(context.cancellationSignal.reason)}`);
    const message = (error as Error).message;
    if (/no resource plugin/i.test(message)) throw ApplicationFailure.nonRetryable(message, 'PluginMissing');
    throw error;
  } finally {
    clearInterval(alive);
  }
}
