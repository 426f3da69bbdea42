// Kiln's list prices for its plans: what an organization on each plan pays per month, in US cents.
// Plain data, like gpu-types.ts; GET /v1/admin/revenue computes monthly recurring revenue from it.
import type { Plan } from '../control-plane/organizations/organization.entity.ts';

export const PLAN_MONTHLY_PRICE_CENTS: Readonly<Record<Plan, number>> = {
  free: 0,
  startup: 49_00,
  growth: 499_00,
  enterprise: 2_499_00,
};
