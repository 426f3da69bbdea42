// Where the rate limits' counts are kept: window counters in PostgreSQL (rate-limiter-flexible's
// RateLimiterPostgres layout: a key, its points and its window's end), shared by every replica of the API and
// of the inference gateway. The API counts each request in the database (one round trip, exact); the gateway
// counts in memory and adds its counts to the same rows every flush (no round trip on a request's path; each
// replica learns the others' counts at its next flush, so together they may pass a limit by what they admit
// within one flush interval).
import type pg from 'pg';

export const RATE_LIMIT_TABLE = 'rate_limit';

/** A window's count once a request is counted, and how long until it starts again. */
export interface WindowCount { readonly points: number; readonly msBeforeNext: number }

export interface RateCounters {
  /** Counts one request in each key's window (a window that has ended starts again at one). */
  add(keys: readonly string[], windowMs: number): Promise<Map<string, WindowCount>>;
  /** Writes what is still counted only in memory. */
  close(): Promise<void>;
}

// Adds each key's points to its window (one row each); a window that has ended starts again with them. Keys are
// locked in the order given, the same in every request (subject, then organization), so two requests never
// deadlock. $1 keys, $2 points to add, $3 a new window's end (ms), $4 now (ms).
const ADD = `
  INSERT INTO ${RATE_LIMIT_TABLE} AS r (key, points, expire)
  SELECT key, points, expire FROM unnest($1::text[], $2::int[], $3::bigint[]) AS t(key, points, expire)
  ON CONFLICT (key) DO UPDATE SET
    points = CASE WHEN r.expire <= $4::bigint THEN excluded.points ELSE r.points + excluded.points END,
    expire = CASE WHEN r.expire <= $4::bigint THEN excluded.expire ELSE r.expire END
  RETURNING key, points, expire`;

async function addInDatabase(pool: pg.Pool, keys: readonly string[], points: readonly number[], ends: readonly number[], now: number): Promise<Map<string, WindowCount>> {
  const { rows } = await pool.query<{ key: string; points: number; expire: string }>({ name: 'kiln-rate-limit', text: ADD, values: [keys, points, ends, now] });
  return new Map(rows.map((row) => [row.key, { points: row.points, msBeforeNext: Math.max(Number(row.expire) - now, 0) }]));
}

/** Each request counted in the database as it comes: exact across replicas, one round trip per request. */
export function databaseCounters(pool: pg.Pool): RateCounters {
  return {
    add(keys, windowMs) {
      const now = Date.now();
      return addInDatabase(pool, keys, keys.map(() => 1), keys.map(() => now + windowMs), now);
    },
    close: async () => {},
  };
}

interface LocalWindow {
  /** The window's count in the database at the last flush (every replica's). */
  shared: number;
  /** Counted here since then. */
  pending: number;
  /** The window's end (ms since the epoch), as the database last said or as guessed here. */
  end: number;
}

/**
 * Counts in memory, answered at once, and adds the counts to the database every `flushMs` (and at close). A flush
 * that fails (the database away) keeps its counts for the next; meanwhile each replica limits on its own view.
 */
export function batchedCounters(pool: pg.Pool, options: { flushMs: number; onError?: (error: unknown) => void }): RateCounters {
  const windows = new Map<string, LocalWindow>();
  let flushing: Promise<void> | undefined;

  async function flushOnce(): Promise<void> {
    const now = Date.now();
    const due = [...windows].filter(([key, w]) => {
      if (w.pending === 0 && w.end <= now) windows.delete(key);
      return w.pending > 0;
    });
    if (!due.length) return;
    const sent = due.map(([, w]) => w.pending);
    const counts = await addInDatabase(pool, due.map(([key]) => key), sent, due.map(([, w]) => w.end), now);
    due.forEach(([key, w], i) => {
      const count = counts.get(key);
      w.pending -= sent[i]!;
      if (count) {
        w.shared = count.points;
        w.end = now + count.msBeforeNext;
      }
    });
  }

  function flush(): Promise<void> {
    flushing ??= flushOnce().catch((error: unknown) => options.onError?.(error)).finally(() => { flushing = undefined; });
    return flushing;
  }

  const timer = setInterval(() => void flush(), options.flushMs);
  timer.unref();

  return {
    async add(keys, windowMs) {
      const now = Date.now();
      return new Map(keys.map((key) => {
        let w = windows.get(key);
        if (!w) {
          w = { shared: 0, pending: 0, end: now + windowMs };
          windows.set(key, w);
        } else if (w.end <= now) {
          // A new window: the database's count (and end) comes with the next flush.
          w.shared = 0;
          w.end = now + windowMs;
        }
        w.pending += 1;
        return [key, { points: w.shared + w.pending, msBeforeNext: w.end - now }];
      }));
    },
    async close() {
      clearInterval(timer);
      await flushing;
      await flush();
    },
  };
}
