// Rate limits by plan (catalog/plans.ts), per API key (or login user) and per organization, counted in
// PostgreSQL so every control-plane replica shares them. Both counters go up in one statement: one round
// trip per request (a second only for a request past the minute's limit, to draw on the burst allowance).
// The rows keep rate-limiter-flexible's RateLimiterPostgres layout and meaning (window counters with an
// expiry), so the sign-in limiter shares the table and its hourly sweep of expired rows. Calls without a
// valid credential are limited per client address at the free plan's rate.
import type { Middleware } from 'koa';
import type pg from 'pg';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { PLAN_RATE_LIMITS, type Plan, type PlanLimit } from '../../catalog/plans.ts';
import type { AppState } from './context.ts';
import { RateLimitedError } from '../core/errors.ts';


/** The burst allowance (burst - perMinute) refills over this many seconds, so bursts stay occasional. */
const BURST_REFILL_SECONDS = 600;
export const RATE_LIMIT_TABLE = 'rate_limit';

interface Count {
  allowed: boolean;
  /** Left in the per-minute window. */
  remaining: number;
  msBeforeNext: number;
}

// One statement counts a request against several windows (one row each): a window that has ended starts
// again at one. Keys are locked in the order given, the same in every request (subject, then
// organization), so two requests never deadlock. $1 keys, $2 a new window's end, $3 now (ms).
const COUNT = `
  INSERT INTO ${RATE_LIMIT_TABLE} AS r (key, points, expire)
  SELECT key, 1, $2::bigint FROM unnest($1::text[]) AS key
  ON CONFLICT (key) DO UPDATE SET
    points = CASE WHEN r.expire <= $3::bigint THEN 1 ELSE r.points + 1 END,
    expire = CASE WHEN r.expire <= $3::bigint THEN excluded.expire ELSE r.expire END
  RETURNING key, points, expire`;

async function count(pool: pg.Pool, keys: string[], windowMs: number, now: number): Promise<Map<string, { points: number; msBeforeNext: number }>> {
  const { rows } = await pool.query<{ key: string; points: number; expire: string }>({ name: 'kiln-rate-limit', text: COUNT, values: [keys, now + windowMs, now] });
  return new Map(rows.map((row) => [row.key, { points: row.points, msBeforeNext: Math.max(Number(row.expire) - now, 0) }]));
}

// Every subject's minute counter goes up by one: one round trip. Only a subject past its minute's limit
// then draws on its burst allowance, in a second statement (as BurstyRateLimiter does).
async function countInDatabase(pool: pg.Pool, plan: Plan, limit: PlanLimit, subjects: string[]): Promise<Count[]> {
  const now = Date.now();
  const minute = await count(pool, subjects.map((s) => `${plan}:${s}`), 60_000, now);
  const counts = subjects.map((s) => minute.get(`${plan}:${s}`)!);
  const over = subjects.filter((_, i) => counts[i]!.points > limit.perMinute);
  const allowance = Math.max(0, limit.burst - limit.perMinute);
  const burst = over.length && allowance ? await count(pool, over.map((s) => `${plan}_burst:${s}`), BURST_REFILL_SECONDS * 1000, now) : new Map();
  return subjects.map((subject, i) => {
    const { points, msBeforeNext } = counts[i]!;
    if (points <= limit.perMinute) return { allowed: true, remaining: limit.perMinute - points, msBeforeNext };
    // Past the minute's limit: the answer waits for whichever window ends first, as BurstyRateLimiter does.
    const drawn = burst.get(`${plan}_burst:${subject}`);
    return { allowed: drawn !== undefined && drawn.points <= allowance, remaining: 0, msBeforeNext: Math.min(msBeforeNext, drawn?.msBeforeNext ?? msBeforeNext) };
  });
}

// While PostgreSQL is unreachable each replica counts in memory instead, so an outage is reported by the
// routes (health answers 503) rather than by the limiter.
function memoryLimiters(limits: Readonly<Record<Plan, PlanLimit>>) {
  const entries = Object.entries(limits).map(([plan, limit]) => [plan, new BurstyRateLimiter(
    new RateLimiterMemory({ keyPrefix: plan, points: limit.perMinute, duration: 60 }),
    new RateLimiterMemory({ keyPrefix: `${plan}_burst`, points: Math.max(0, limit.burst - limit.perMinute), duration: BURST_REFILL_SECONDS }),
  )] as const);
  return new Map<string, BurstyRateLimiter>(entries);
}

async function countInMemory(limiter: BurstyRateLimiter, subjects: string[]): Promise<Count[]> {
  return Promise.all(subjects.map((subject) => limiter.consume(subject).then(
    (res) => ({ allowed: true, remaining: res.remainingPoints, msBeforeNext: res.msBeforeNext }),
    (rejection: unknown) => {
      if (rejection instanceof RateLimiterRes) return { allowed: false, remaining: rejection.remainingPoints, msBeforeNext: rejection.msBeforeNext };
      throw rejection;
    },
  )));
}

export interface RateLimitDeps {
  pool: pg.Pool;
  limits?: Readonly<Record<Plan, PlanLimit>>;
  /**
   * Whether a request without a user's credential is a scraper holding KILN_METRICS_TOKEN: it is no user, and
   * a Prometheus scraping every replica from one address would use up that address's budget.
   */
  isScraper?: (authorization: string) => boolean;
}

export function rateLimit(deps: RateLimitDeps): Middleware<AppState> {
  const limits = deps.limits ?? PLAN_RATE_LIMITS;
  const inMemory = memoryLimiters(limits);

  return async (ctx, next) => {
    const principal = ctx.state.principal;
    if (!principal && deps.isScraper?.(ctx.get('Authorization'))) return next();
    const plan: Plan = principal?.plan ?? 'free';
    const subjects = principal
      ? [principal.apiKeyId ? `key:${principal.apiKeyId}` : `user:${principal.userId}`, `org:${principal.organizationId}`]
      : [`ip:${ctx.ip}`];
    const counts = await countInDatabase(deps.pool, plan, limits[plan], subjects)
      .catch(() => countInMemory(inMemory.get(plan)!, subjects));
    // Report the tightest of the limits that apply.
    const tightest = counts.reduce((a, b) => (!b.allowed && a.allowed) || b.remaining < a.remaining ? b : a);
    const resetSeconds = Math.max(1, Math.ceil(tightest.msBeforeNext / 1000));
    ctx.set({
      'X-RateLimit-Limit': String(limits[plan].perMinute),
      'X-RateLimit-Remaining': String(tightest.remaining),
      'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + resetSeconds),
    });
    if (counts.some((c) => !c.allowed)) {
      throw new RateLimitedError('Rate limit exceeded', { retry_after: resetSeconds }, { 'Retry-After': String(resetSeconds) });
    }
    await next();
  };
}

/** Failed sign-ins per account: five in fifteen minutes, then sign-in waits out the window. */
export const SIGNIN_FAILURES = { keyPrefix: 'signin_failures', points: 5, duration: 15 * 60 } as const;

export function signinFailureLimiter(pool: pg.Pool): RateLimiterPostgres {
  return new RateLimiterPostgres({ storeClient: pool, storeType: 'pool', tableName: RATE_LIMIT_TABLE, tableCreated: true, ...SIGNIN_FAILURES });
}
