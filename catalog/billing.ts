// Billing's rules, shared by the API (usage, projections, invoices) and the worker (metering, invoicing):
// what is billable, the exact unit usage is counted in, and when a balance is low. Money is integers only.
import { findGpuType } from './gpu-types.ts';

/**
 * Usage is counted exactly in cent-milliseconds-per-hour: a GPU priced `c` cents an hour held for `ms`
 * milliseconds costs `c * ms` of these units, and this many of them make one cent. Prices are whole cents per
 * GPU-hour and times whole milliseconds, so no usage is ever rounded until it is drawn as whole cents.
 */
export const USAGE_UNITS_PER_CENT = 3_600_000;

/** A GPU type's price per GPU-hour in whole US cents (the catalog lists dollars). */
export function gpuCentsPerHour(gpu: string): number {
  const type = findGpuType(gpu);
  if (!type) throw new Error(`unknown GPU type ${gpu}`);
  return Math.round(type.hourlyPriceUsd * 100);
}

/**
 * Statuses in which a deployment's replicas hold GPUs and are charged. `deploying` is not (nothing answers
 * yet); stopped, scaled to zero, failed, deleting and deleted cost nothing from the moment they are recorded.
 */
export const BILLABLE_STATUSES: ReadonlySet<string> = new Set(['running', 'scaling', 'updating']);

/** The replicas a status record charges for. */
export function billableReplicas(status: string, replicas: number): number {
  return BILLABLE_STATUSES.has(status) ? Math.max(0, replicas) : 0;
}

/**
 * Whole cents drawn when an organization's metered usage grows from `before` to `after` (both in usage units):
 * the cents crossed, so fractions carry to the next interval and the sum of debits never drifts from usage.
 */
export function centsCrossed(before: number, after: number): number {
  return Math.floor(after / USAGE_UNITS_PER_CENT) - Math.floor(before / USAGE_UNITS_PER_CENT);
}

/** Usage units rounded to whole cents (for display and invoice lines): half a cent and up rounds up. */
export function unitsToCents(units: number): number {
  return Math.round(units / USAGE_UNITS_PER_CENT);
}

/** Percentages of the last top-up (or grant) at which the organization's owners and admins are told the balance is low. */
export const LOW_BALANCE_PERCENTS = [20, 5] as const;

/** The lowest threshold a balance has fallen to (a percentage of `lastTopUpCents`), or null above all. */
export function lowBalanceThreshold(balanceCents: number, lastTopUpCents: number): number | null {
  if (lastTopUpCents <= 0) return null;
  let reached: number | null = null;
  for (const percent of LOW_BALANCE_PERCENTS) if (balanceCents * 100 <= lastTopUpCents * percent) reached = percent;
  return reached;
}

/** The calendar month (UTC) holding `at`: the billing period invoices close. */
export function billingPeriod(at: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { start, end };
}

/** The metering interval of `lengthMs` (aligned to the epoch) that holds `at`. */
export function meteringInterval(at: Date, lengthMs: number): { start: Date; end: Date } {
  const start = Math.floor(at.getTime() / lengthMs) * lengthMs;
  return { start: new Date(start), end: new Date(start + lengthMs) };
}
