// A pass run every interval once started, until stopped, one at a time (a slow pass delays the next rather than
// overlapping it), a failure handed to `onError` rather than thrown: the API's background loops (desired-state
// redelivery, notification e-mail) run on it, started and stopped by their areas' modules. The timer never
// keeps a process alive; `stop` waits for the pass under way, and is harmless on a loop never started.
export interface Periodic {
  start(): void;
  stop(): Promise<void>;
}

export function createPeriodic(pass: () => Promise<void>, options: { intervalMs: number; onError: (error: unknown) => void }): Periodic {
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      if (timer) return;
      timer = setInterval(() => {
        running = running.then(pass).catch(options.onError);
      }, options.intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
