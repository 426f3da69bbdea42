// Pulumi operations in a child process of the worker's, one at a time. Pulumi's Node.js runtime keeps
// process-wide state: two inline programs at once in one process see each other's errors, and an aborted or
// failed operation leaves unhandled rejections behind. So a process runs one operation at a time, and after one
// that failed, was aborted or left anything unhandled it exits; the worker is untouched by either. After a
// clean one it waits for the next (operation-pool.ts keeps it warm: its SDKs are loaded already).
// Protocol (IPC): receives { settings, request, operation }, then optionally 'abort'; sends
// { type: 'progress', line }, { type: 'step', step } and { type: 'drift', drift }, then { type: 'done', outputs, reusable, cpuSeconds, loadCpuSeconds }
// or { type: 'failed', message, aborted, cpuSeconds, loadCpuSeconds }; then waits for the next request, or exits when not reusable.
import { readFileSync } from 'node:fs';
import type { OutputMap, PulumiFn } from '@pulumi/pulumi/automation/index.js';
import { runStackOperationHere, type OperationMessage, type OperationRequest } from './automation.ts';

const send = (message: OperationMessage) => new Promise<void>((resolve) => {
  if (!process.connected) return resolve(); // nobody is left to tell
  process.send!(message, () => resolve());
});

/**
 * CPU-seconds this process and the processes it ran and reaped (the Pulumi CLI, which reaps its plugins) have
 * used: /proc/self/stat's utime, stime, cutime and cstime, in clock ticks of 1/100 s.
 */
function cpuSecondsSoFar(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return [11, 12, 13, 14].reduce((sum, at) => sum + Number(fields[at]), 0) / 100;
}
const hundredths = (seconds: number) => Math.round(seconds * 100) / 100;
/**
 * Each answer carries the CPU used since the previous one (the first: since the process started) in two parts:
 * until the operation's program was loaded (the process's start, Pulumi's SDKs and the program's modules the first
 * time; about nothing for a warm process) and the operation itself.
 */
let cpuAtLastAnswer = 0;
let cpuAtProgramLoaded: number | undefined;
function cpuSinceLastAnswer(): { cpuSeconds: number; loadCpuSeconds: number } {
  const now = cpuSecondsSoFar();
  const loaded = cpuAtProgramLoaded ?? now;
  const spent = { cpuSeconds: hundredths(now - loaded), loadCpuSeconds: hundredths(loaded - cpuAtLastAnswer) };
  cpuAtLastAnswer = now;
  cpuAtProgramLoaded = undefined;
  return spent;
}

/**
 * The operation running now, or the last one: `running`, then `answering` while its answer is on its way to
 * the worker, then `answered`; `strayRejection`: something was left unhandled during it (or after it).
 */
let current: { abort: AbortController; strayRejection: boolean; phase: 'running' | 'answering' | 'answered' } | undefined;

process.on('message', (message: OperationRequest | 'abort') => {
  if (message === 'abort') return current?.abort.abort();
  void run(message);
});
// The worker that asked died (a crash, an evicted pod): its activity will be retried elsewhere, so this
// operation must not go on beside the retry. Aborting lets the engine leave the stack consistent; an idle
// process has nothing to finish.
process.on('disconnect', () => {
  if (current?.phase !== 'running') process.exit(0);
  current.abort.abort();
});
// A rejection nobody handled while the operation runs is usually a consequence, not the cause: once the engine
// gives up on one resource, the program's other registrations are refused ("Resource monitor is terminating")
// and Pulumi's runtime leaves those unhandled on purpose. The engine's own answer, which names the cause,
// follows within moments, so the stray reason is only the answer if none comes. Either way the process is not
// used again: between operations it ends at once, while an answer is on its way, once it is sent.
const STRAY_REJECTION_GRACE_MS = 60_000;
process.on('unhandledRejection', (reason) => {
  const operation = current;
  if (!operation || operation.phase === 'answered') return process.exit(1);
  if (operation.strayRejection) return;
  operation.strayRejection = true;
  if (operation.phase === 'running') setTimeout(() => { if (operation.phase === 'running') void fail(reason); }, STRAY_REJECTION_GRACE_MS);
});

async function run({ settings, request, operation }: OperationRequest): Promise<void> {
  const state: NonNullable<typeof current> = { abort: new AbortController(), strayRejection: false, phase: 'running' };
  current = state;
  try {
    const { [request.programExport]: build } = (await import(request.programModule)) as Record<string, ((input: unknown) => PulumiFn) | undefined>;
    if (typeof build !== 'function') throw new Error(`${request.programModule} has no export ${request.programExport}`);
    cpuAtProgramLoaded = cpuSecondsSoFar();
    const outputs: OutputMap = await runStackOperationHere(settings, { ...request, program: build(request.programInput) }, operation, {
      signal: state.abort.signal,
      onProgress: (line) => void send({ type: 'progress', line }),
      onStep: (step) => void send({ type: 'step', step }),
      onDrift: (drift) => void send({ type: 'drift', drift }),
    });
    state.phase = 'answering';
    const reusable = !state.strayRejection && !state.abort.signal.aborted && process.connected;
    await send({ type: 'done', outputs, reusable, ...cpuSinceLastAnswer() });
    state.phase = 'answered';
    if (!reusable || state.strayRejection) process.exit(0);
  } catch (error) {
    await fail(error);
  }
}

async function fail(error: unknown): Promise<void> {
  if (current) current.phase = 'answering';
  await send({ type: 'failed', message: error instanceof Error ? error.message : String(error), aborted: current?.abort.signal.aborted ?? false, ...cpuSinceLastAnswer() });
  process.exit(0);
}
