// Kiln's plans: one table of what each plan is. Plain data, like gpu-types.ts: organizations store a plan's
// name, GET /v1/admin/revenue computes monthly recurring revenue from the prices, and the API's rate limiter
// applies the limits.

export const PLANS = ['free', 'startup', 'growth', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface PlanLimit {
  /** Sustained requests per minute. */
  perMinute: number;
  /** Most requests allowed in one minute by drawing on the burst allowance. */
  burst: number;
}

export interface PlanTerms {
  /** List price: what an organization on the plan pays per month, in US cents. */
  readonly monthlyPriceCents: number;
  /** API rate limit (the spec's Set A), per credential and per organization. */
  readonly rateLimit: PlanLimit;
}

/** Enterprise's rate limit is "custom" in the spec: this is its default until a contract says otherwise. */
export const PLAN_TERMS: Readonly<Record<Plan, PlanTerms>> = {
  free: { monthlyPriceCents: 0, rateLimit: { perMinute: 60, burst: 100 } },
  startup: { monthlyPriceCents: 49_00, rateLimit: { perMinute: 600, burst: 1_000 } },
  growth: { monthlyPriceCents: 499_00, rateLimit: { perMinute: 6_000, burst: 10_000 } },
  enterprise: { monthlyPriceCents: 2_499_00, rateLimit: { perMinute: 60_000, burst: 100_000 } },
};

/** Plans with a monthly fee: the ones checkout sells, and the ones invoiced in a month without usage. */
export const PAID_PLANS = PLANS.filter((plan) => PLAN_TERMS[plan].monthlyPriceCents > 0) as unknown as readonly [PaidPlan, ...PaidPlan[]];
/** Free is the one plan without a fee (PLAN_TERMS). */
export type PaidPlan = Exclude<Plan, 'free'>;

/** A new organization's free-plan grant, in US cents: enough to try a deployment at once. */
export const FREE_PLAN_CREDITS_CENTS = 2_500;

const perPlan = <T>(term: (terms: PlanTerms) => T) => Object.fromEntries(PLANS.map((plan) => [plan, term(PLAN_TERMS[plan])])) as Readonly<Record<Plan, T>>;

export const PLAN_MONTHLY_PRICE_CENTS = perPlan((terms) => terms.monthlyPriceCents);
export const PLAN_RATE_LIMITS = perPlan((terms) => terms.rateLimit);
