// Rate limits by plan (catalog/plans.ts), per API key (or login user) and per organization, counted in
// PostgreSQL so every replica of the API and of the inference gateway shares them (rate-counters.ts). Inference
// and management requests are counted apart (two lanes), and an organization's counter allows
// ORGANIZATION_HEADROOM credentials' worth: one key's traffic, however heavy, never refuses another credential's
// calls, nor its own calls of the other lane. Both counters go up in one count (a second only for a request
// past the minute's limit, to draw on the burst allowance). The rows keep rate-limiter-flexible's RateLimiterPostgres layout and meaning
// (window counters with an expiry), so the sign-in limiter shares the table and its hourly sweep of expired
// rows. Calls without a valid credential are limited per client address at the free plan's rate.
import type { Middleware } from 'koa';
import type pg from 'pg';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { PLAN_RATE_LIMITS, type Plan, type PlanLimit } from '../../catalog/plans.ts';
import type { AppState } from './context.ts';
import { RateLimitedError } from '../core/errors.ts';
import { RATE_LIMIT_TABLE, type RateCounters, type WindowCount } from './rate-counters.ts';

/** An organization's counter in each lane allows this many credentials at the plan's rate. */
export const ORGANIZATION_HEADROOM = 5;

/** The burst allowance (burst - perMinute) refills over this many seconds, so bursts stay occasional. */
const BURST_REFILL_SECONDS = 600;

interface Count {
  allowed: boolean;
  /** Left in the per-minute window. */
  remaining: number;
  msBeforeNext: number;
}

/** A counter a request goes against, and the limit it keeps. */
interface Subject { readonly key: string; readonly limit: PlanLimit }

// Every subject's minute counter goes up by one. Only a subject past its minute's limit then draws on its
// burst allowance, in a second count (as BurstyRateLimiter does).
async function countShared(counters: RateCounters, subjects: readonly Subject[]): Promise<Count[]> {
  const minute = await counters.add(subjects.map((s) => s.key), 60_000);
  const counts = subjects.map((s) => minute.get(s.key)!);
  const allowanceOf = (s: Subject) => Math.max(0, s.limit.burst - s.limit.perMinute);
  const over = subjects.filter((s, i) => counts[i]!.points > s.limit.perMinute && allowanceOf(s) > 0);
  const burst = over.length ? await counters.add(over.map((s) => `burst:${s.key}`), BURST_REFILL_SECONDS * 1000) : new Map<string, WindowCount>();
  return subjects.map((subject, i) => {
    const { points, msBeforeNext } = counts[i]!;
    if (points <= subject.limit.perMinute) return { allowed: true, remaining: subject.limit.perMinute - points, msBeforeNext };
    // Past the minute's limit: the answer waits for whichever window ends first, as BurstyRateLimiter does.
    const drawn = burst.get(`burst:${subject.key}`);
    return { allowed: drawn !== undefined && drawn.points <= allowanceOf(subject), remaining: 0, msBeforeNext: Math.min(msBeforeNext, drawn?.msBeforeNext ?? msBeforeNext) };
  });
}

// While PostgreSQL is unreachable each replica counts in memory instead, so an outage is reported by the
// routes (health answers 503) rather than by the limiter. One limiter per limit, made when first needed.
function memoryLimiters() {
  const byLimit = new Map<string, BurstyRateLimiter>();
  return (limit: PlanLimit) => {
    const id = `${limit.perMinute}/${limit.burst}`;
    let limiter = byLimit.get(id);
    if (!limiter) {
      limiter = new BurstyRateLimiter(
        new RateLimiterMemory({ keyPrefix: id, points: limit.perMinute, duration: 60 }),
        new RateLimiterMemory({ keyPrefix: `${id}_burst`, points: Math.max(0, limit.burst - limit.perMinute), duration: BURST_REFILL_SECONDS }),
      );
      byLimit.set(id, limiter);
    }
    return limiter;
  };
}

async function countInMemory(limiterFor: (limit: PlanLimit) => BurstyRateLimiter, subjects: readonly Subject[]): Promise<Count[]> {
  return Promise.all(subjects.map((subject) => limiterFor(subject.limit).consume(subject.key).then(
    (res) => ({ allowed: true, remaining: res.remainingPoints, msBeforeNext: res.msBeforeNext }),
    (rejection: unknown) => {
      if (rejection instanceof RateLimiterRes) return { allowed: false, remaining: rejection.remainingPoints, msBeforeNext: rejection.msBeforeNext };
      throw rejection;
    },
  )));
}

export interface RateLimitDeps {
  /** Where the counts are kept: databaseCounters (the API) or batchedCounters (the inference gateway). */
  counters: RateCounters;
  limits?: Readonly<Record<Plan, PlanLimit>>;
  /**
   * Whether a request without a user's credential is a scraper holding KILN_METRICS_TOKEN: it is no user, and
   * a Prometheus scraping every replica from one address would use up that address's budget.
   */
  isScraper?: (authorization: string) => boolean;
  /**
   * Whether a request is a health probe: answered from memory, asked every few seconds by load balancers from
   * one address, and it must answer even while the database (where the counters are) does not.
   */
  isHealthProbe?: (path: string) => boolean;
  /** Whether a request is inference (its own lane of limits); everything else is management. */
  isInference?: (method: string, path: string) => boolean;
}

export function rateLimit(deps: RateLimitDeps): Middleware<AppState> {
  const limits = deps.limits ?? PLAN_RATE_LIMITS;
  const inMemory = memoryLimiters();

  return async (ctx, next) => {
    const principal = ctx.state.principal;
    if (!principal && deps.isScraper?.(ctx.get('Authorization'))) return next();
    if (deps.isHealthProbe?.(ctx.path)) return next();
    const plan: Plan = principal?.plan ?? 'free';
    const limit = limits[plan];
    const lane = deps.isInference?.(ctx.method, ctx.path) ? 'inference' : 'management';
    const subjects: Subject[] = principal
      ? [
        { key: `${plan}:${lane}:${principal.apiKeyId ? `key:${principal.apiKeyId}` : `user:${principal.userId}`}`, limit },
        { key: `${plan}:${lane}:org:${principal.organizationId}`, limit: { perMinute: limit.perMinute * ORGANIZATION_HEADROOM, burst: limit.burst * ORGANIZATION_HEADROOM } },
      ]
      : [{ key: `${plan}:${lane}:ip:${ctx.ip}`, limit }];
    const counts = await countShared(deps.counters, subjects).catch(() => countInMemory(inMemory, subjects));
    // Report the tightest of the limits that apply: the credential's own, as a rule.
    const tightestAt = counts.reduce((a, c, i) => ((!c.allowed && counts[a]!.allowed) || c.remaining < counts[a]!.remaining ? i : a), 0);
    const tightest = counts[tightestAt]!;
    const resetSeconds = Math.max(1, Math.ceil(tightest.msBeforeNext / 1000));
    ctx.set({
      'X-RateLimit-Limit': String(subjects[tightestAt]!.limit.perMinute),
      'X-RateLimit-Remaining': String(tightest.remaining),
      'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + resetSeconds),
    });
    if (counts.some((c) => !c.allowed)) {
      throw new RateLimitedError(`Rate limit exceeded for ${lane} requests`, { retry_after: resetSeconds, lane }, { 'Retry-After': String(resetSeconds) });
    }
    await next();
  };
}

/** Failed sign-ins per account: five in fifteen minutes, then sign-in waits out the window. */
export const SIGNIN_FAILURES = { keyPrefix: 'signin_failures', points: 5, duration: 15 * 60 } as const;

export function signinFailureLimiter(pool: pg.Pool): RateLimiterPostgres {
  return new RateLimiterPostgres({ storeClient: pool, storeType: 'pool', tableName: RATE_LIMIT_TABLE, tableCreated: true, ...SIGNIN_FAILURES });
}
