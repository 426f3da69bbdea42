// Polls until a probe answers (anything but undefined or false) and returns the answer; fails after a
// timeout naming what it waited for. The one way tests wait for something asynchronous to happen.
import { setTimeout as sleep } from 'node:timers/promises';

export async function eventually<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
