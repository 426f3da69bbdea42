// One Pulumi operation in a child process of its own. Pulumi's Node.js runtime keeps process-wide state: two
// inline programs in one process see each other's errors, and an aborted operation leaves unhandled
// rejections behind. A process per operation keeps the worker untouched by either.
// Protocol (IPC): receives { settings, request, operation }, then optionally 'abort'; sends
// { type: 'progress', line }, { type: 'step', step } and { type: 'drift', drift }, then { type: 'done', outputs } or { type: 'failed', message, aborted }.
import type { OutputMap, PulumiFn } from '@pulumi/pulumi/automation/index.js';
import { runStackOperationHere, type OperationMessage, type OperationRequest } from './automation.ts';

const send = (message: OperationMessage) => new Promise<void>((resolve) => {
  if (!process.connected) return resolve(); // nobody is left to tell
  process.send!(message, () => resolve());
});
const abort = new AbortController();
let finished = false;

process.on('message', (message: OperationRequest | 'abort') => {
  if (message === 'abort') return abort.abort();
  void run(message);
});
// The worker that asked died (a crash, an evicted pod): its activity will be retried elsewhere, so this
// operation must not go on beside the retry. Aborting lets the engine leave the stack consistent.
process.on('disconnect', () => {
  abort.abort();
  if (finished) process.exit(0);
});
// A rejection nobody handled while the operation runs is usually a consequence, not the cause: once the engine
// gives up on one resource, the program's other registrations are refused ("Resource monitor is terminating")
// and Pulumi's runtime leaves those unhandled on purpose. The engine's own answer, which names the cause,
// follows within moments, so the stray reason is only the answer if none comes. After the answer was sent,
// whatever is left unhandled is of no interest to anyone.
const STRAY_REJECTION_GRACE_MS = 60_000;
let strayRejection = false;
process.on('unhandledRejection', (reason) => {
  if (finished || strayRejection) return;
  strayRejection = true;
  setTimeout(() => { if (!finished) void fail(reason); }, STRAY_REJECTION_GRACE_MS);
});

async function run({ settings, request, operation }: OperationRequest): Promise<void> {
  try {
    const { [request.programExport]: build } = (await import(request.programModule)) as Record<string, ((input: unknown) => PulumiFn) | undefined>;
    if (typeof build !== 'function') throw new Error(`${request.programModule} has no export ${request.programExport}`);
    const outputs: OutputMap = await runStackOperationHere(settings, { ...request, program: build(request.programInput) }, operation, {
      signal: abort.signal,
      onProgress: (line) => void send({ type: 'progress', line }),
      onStep: (step) => void send({ type: 'step', step }),
      onDrift: (drift) => void send({ type: 'drift', drift }),
    });
    finished = true;
    await send({ type: 'done', outputs });
  } catch (error) {
    await fail(error);
  }
  process.exit(0);
}

async function fail(error: unknown): Promise<void> {
  finished = true;
  await send({ type: 'failed', message: error instanceof Error ? error.message : String(error), aborted: abort.signal.aborted });
  process.exit(0);
}
