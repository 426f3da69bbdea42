// The operation processes (operation-process.ts), kept warm: loading Pulumi's SDKs and the Kubernetes one costs
// a process about two CPU-seconds, more than the engine spends on a deployment's `up`. A process runs one
// operation at a time and is used again only after one that ended cleanly (no error, no abort, nothing left
// unhandled), and at most `operationsPerProcess` times; otherwise it exits and a fresh one takes its place.
// At most `concurrency` run at once, the rest wait their turn in order: twenty operations on two cores then
// queue briefly instead of thrashing twenty fresh processes together.
import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { availableParallelism } from 'node:os';

/** By default a process answers this many operations, then is replaced: whatever Pulumi's runtime keeps per process stays bounded. */
export const OPERATIONS_PER_PROCESS = 25;
const OPERATION_PROCESS = new URL('./operation-process.ts', import.meta.url).pathname;

/** One warm process, lent to one operation at a time. */
export interface OperationProcess {
  readonly child: ChildProcess;
  /** What it wrote to stderr lately, to explain an exit without an answer. */
  stderr(): string;
  /** The operations it has run (the pool replaces it after `operationsPerProcess`). */
  operations: number;
}

export interface OperationPool {
  /** Waits for a free slot and lends a process (warm when one is idle); give it back with release. */
  acquire(): Promise<OperationProcess>;
  /** Returns the process: kept for the next operation when `reusable`, else ended. Frees the slot either way. */
  release(process: OperationProcess, reusable: boolean): void;
  /** Ends the idle processes; the busy ones end when their operation is released. */
  close(): void;
}

export function createOperationPool({ concurrency = Math.max(2, availableParallelism()), operationsPerProcess = OPERATIONS_PER_PROCESS }: { concurrency?: number; operationsPerProcess?: number } = {}): OperationPool {
  const idle: OperationProcess[] = [];
  const waiting: (() => void)[] = [];
  let running = 0;
  let closed = false;

  const alive = (lent: OperationProcess) => lent.child.connected && lent.child.exitCode === null;

  function start(): OperationProcess {
    const child = fork(OPERATION_PROCESS, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    // A fork that failed or a channel that closed under a send is an operation's failure (its exit says so), never the worker's.
    child.on('error', () => undefined);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000); });
    return { child, stderr: () => stderr, operations: 0 };
  }

  /** Whether the process keeps the worker alive (its IPC channel and stderr pipe count too): an idle one does not. */
  function held(lent: OperationProcess, yes: boolean): void {
    const handles = [lent.child, lent.child.channel, lent.child.stderr as Socket | null];
    for (const handle of handles) if (yes) handle?.ref(); else handle?.unref();
  }

  return {
    async acquire() {
      // A slot freed by release is handed straight to the longest waiting, so none is taken twice.
      if (running < concurrency) running += 1;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      // One that died while idle (killed from outside) is left behind.
      let warm = idle.pop();
      while (warm && !alive(warm)) warm = idle.pop();
      if (!warm) return start();
      held(warm, true);
      return warm;
    },
    release(lent, reusable) {
      lent.operations += 1;
      if (reusable && alive(lent) && !closed && lent.operations < operationsPerProcess) {
        held(lent, false);
        idle.push(lent);
      } else if (alive(lent)) {
        lent.child.kill();
      }
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    },
    close() {
      closed = true;
      for (const lent of idle.splice(0)) lent.child.kill();
    },
  };
}
