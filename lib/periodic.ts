// A pass run every interval once started, until stopped, one at a time (a tick while a pass runs is skipped, so a
// slow pass never piles up others behind it), a failure handed to `onError` rather than thrown: the API's background loops (desired-state
// redelivery, notification e-mail) run on it, started and stopped by their areas' modules. The timer never
// keeps a process alive; `stop` waits for the pass under way, and is harmless on a loop never started.
export interface Periodic {
  start(): void;
  stop(): Promise<void>;
}

export function createPeriodic(pass: () => Promise<void>, options: { intervalMs: number; onError: (error: unknown) => void }): Periodic {
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      if (timer) return;
      timer = setInterval(() => {
        running ??= pass().catch(options.onError).finally(() => { running = undefined; });
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
