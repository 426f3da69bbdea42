// Rate limits by plan (the spec's Set A), per API key (or login user) and per organization, counted in
// PostgreSQL so every control-plane replica shares them (rate-limiter-flexible's Postgres store).
// Calls without a valid credential are limited per client address at the free plan's rate.
import type { Middleware } from 'koa';
import type pg from 'pg';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Plan } from '../organizations/organization.entity.ts';
import type { AppState } from './context.ts';
import { RateLimitedError } from './errors.ts';

export interface PlanLimit {
  /** Sustained requests per minute. */
  perMinute: number;
  /** Most requests allowed in one minute by drawing on the burst allowance. */
  burst: number;
}

/** Set A. Enterprise is "custom" in the spec: this is its default until a contract says otherwise. */
export const PLAN_LIMITS: Readonly<Record<Plan, PlanLimit>> = {
  free: { perMinute: 60, burst: 100 },
  startup: { perMinute: 600, burst: 1_000 },
  growth: { perMinute: 6_000, burst: 10_000 },
  enterprise: { perMinute: 60_000, burst: 100_000 },
};

/** The burst allowance (burst - perMinute) refills over this many seconds, so bursts stay occasional. */
const BURST_REFILL_SECONDS = 600;
export const RATE_LIMIT_TABLE = 'rate_limit';

function limiters(pool: pg.Pool, limits: Readonly<Record<Plan, PlanLimit>>) {
  // While PostgreSQL is unreachable each replica counts in memory instead, so an outage is reported by
  // the routes (health answers 503) rather than by the limiter.
  const store = (keyPrefix: string, points: number, duration: number) => new RateLimiterPostgres({
    storeClient: pool, storeType: 'pool', tableName: RATE_LIMIT_TABLE, tableCreated: true, keyPrefix, points, duration,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
  });
  const entries = Object.entries(limits).map(([plan, limit]) => [plan, new BurstyRateLimiter(
    store(`${plan}`, limit.perMinute, 60),
    store(`${plan}_burst`, Math.max(0, limit.burst - limit.perMinute), BURST_REFILL_SECONDS),
  )] as const);
  return new Map<string, BurstyRateLimiter>(entries);
}

export function rateLimit(deps: { pool: pg.Pool; limits?: Readonly<Record<Plan, PlanLimit>> }): Middleware<AppState> {
  const limits = deps.limits ?? PLAN_LIMITS;
  const byPlan = limiters(deps.pool, limits);

  return async (ctx, next) => {
    const principal = ctx.state.principal;
    const plan: Plan = principal?.plan ?? 'free';
    const subjects = principal
      ? [principal.apiKeyId ? `key:${principal.apiKeyId}` : `user:${principal.userId}`, `org:${principal.organizationId}`]
      : [`ip:${ctx.ip}`];
    const limiter = byPlan.get(plan)!;
    const results = await Promise.all(subjects.map((subject) => limiter.consume(subject).then(
      (res) => ({ res, allowed: true }),
      (rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) return { res: rejection, allowed: false };
        throw rejection;
      },
    )));
    // Report the tightest of the limits that apply.
    const tightest = results.reduce((a, b) => (!b.allowed && a.allowed) || b.res.remainingPoints < a.res.remainingPoints ? b : a);
    const resetSeconds = Math.max(1, Math.ceil(tightest.res.msBeforeNext / 1000));
    ctx.set({
      'X-RateLimit-Limit': String(limits[plan].perMinute),
      'X-RateLimit-Remaining': String(tightest.res.remainingPoints),
      'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + resetSeconds),
    });
    if (results.some((r) => !r.allowed)) {
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
