// The simulated inference engine of one model server: at most `maxConcurrency` requests generate at once (a
// batch), the rest wait in arrival order, as vLLM's scheduler queues what its KV cache cannot hold. A running
// request sees its first token after `ttftMs` and each next one `tokenMs` later; aborting it (a client gone)
// frees its place at once.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Generation } from './tokens.ts';

export interface EngineTiming {
  /** Time to first token (queueing excluded), milliseconds. */
  readonly ttftMs: number;
  /** Time between two generated tokens, milliseconds. */
  readonly tokenMs: number;
  /** Requests generating at once; more wait. */
  readonly maxConcurrency: number;
}

/** vLLM's finish reasons (FinishReason in vllm/v1/engine). */
export const FINISH_REASONS = ['stop', 'length', 'abort'] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

/** What the engine reports as a request progresses, for metrics and logs. */
export interface EngineObserver {
  /** The request's prompt was processed and its first token is out. */
  firstToken(request: { promptTokens: number; queueSeconds: number; ttftSeconds: number }): void;
  token(): void;
  finished(request: { promptTokens: number; generatedTokens: number; reason: FinishReason; e2eSeconds: number; queueSeconds: number }): void;
}

export interface EngineRequest {
  readonly promptTokens: number;
  readonly output: Generation;
  readonly signal: AbortSignal;
}

export interface Engine {
  /** The request's tokens as they are generated; rejects with the signal's reason if it is aborted. */
  generate(request: EngineRequest): AsyncGenerator<string>;
  readonly running: number;
  readonly waiting: number;
  /** Prompt and generated tokens of the running requests: what their KV cache holds. */
  readonly cachedTokens: number;
}

export function createEngine(timing: EngineTiming, observer: EngineObserver): Engine {
  const queue: (() => void)[] = [];
  let running = 0;
  let cachedTokens = 0;

  const acquire = async (signal: AbortSignal) => {
    if (running < timing.maxConcurrency && queue.length === 0) { running++; return; }
    await new Promise<void>((resolve, reject) => {
      const admit = () => { signal.removeEventListener('abort', leave); running++; resolve(); };
      const leave = () => { queue.splice(queue.indexOf(admit), 1); reject(signal.reason as Error); };
      queue.push(admit);
      signal.addEventListener('abort', leave, { once: true });
    });
  };
  const release = () => {
    running--;
    while (running < timing.maxConcurrency && queue.length) queue.shift()!();
  };

  async function* generate({ promptTokens, output, signal }: EngineRequest): AsyncGenerator<string> {
    const arrived = performance.now();
    signal.throwIfAborted();
    await acquire(signal);
    const started = performance.now();
    let generated = 0;
    let reason: FinishReason = 'abort';
    cachedTokens += promptTokens;
    try {
      for (const [i, token] of output.tokens.entries()) {
        const due = started + timing.ttftMs + i * timing.tokenMs;
        await sleep(Math.max(0, due - performance.now()), undefined, { signal });
        generated++;
        cachedTokens++;
        if (i === 0) observer.firstToken({ promptTokens, queueSeconds: (started - arrived) / 1000, ttftSeconds: (performance.now() - arrived) / 1000 });
        observer.token();
        yield token;
      }
      reason = output.finishReason;
    } finally {
      cachedTokens -= promptTokens + generated;
      release();
      observer.finished({ promptTokens, generatedTokens: generated, reason, e2eSeconds: (performance.now() - arrived) / 1000, queueSeconds: (started - arrived) / 1000 });
    }
  }

  return {
    generate,
    get running() { return running; },
    get waiting() { return queue.length; },
    get cachedTokens() { return cachedTokens; },
  };
}
