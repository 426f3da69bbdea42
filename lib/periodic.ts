// A pass run every interval until stopped, one at a time (a slow pass delays the next rather than overlapping
// it), a failure handed to `onError` rather than thrown: the API's background loops (desired-state
// redelivery, notification e-mail) run on it. The timer never keeps a process alive; `stop` waits for the pass
// under way.
export interface Periodic {
  stop(): Promise<void>;
}

export function startPeriodic(pass: () => Promise<void>, options: { intervalMs: number; onError: (error: unknown) => void }): Periodic {
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(pass).catch(options.onError);
  }, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
