// Contract of invoicing: a Temporal Schedule (id INVOICING_SCHEDULE_ID, made by the worker, workflows/schedules.ts)
// starts INVOICING_WORKFLOW at 00:00 UTC on the 1st of each month; the run closes the month that just ended,
// one invoice per organization with usage or a paid plan, once. Months are calendar months, UTC
// (catalog/billing.ts billingPeriod); pure arithmetic here, so the workflow may use it.
export const INVOICING_TASK_QUEUE = 'kiln-invoicing';
export const INVOICING_WORKFLOW = 'invoicingWorkflow';
export const INVOICING_SCHEDULE_ID = 'kiln-invoicing';
/** Midnight UTC on the 1st: the month before has just ended. */
export const INVOICING_CRON = '0 0 1 * *';

/** A month as `YYYY-MM` (UTC). */
export type Month = string;
export const MONTH_PATTERN = /^\d{4}-(0[1-9]|1[0-2])$/;

export interface InvoicingInput {
  /** The month to close; absent (the schedule's runs), the month before the run started. */
  readonly month?: Month;
}

export interface IssueInvoicesInput {
  readonly month: Month;
  /**
   * Issue even for organizations whose metering has not closed the whole month yet (what it closes later is
   * then on no invoice). The workflow waits for metering first and forces only after MAX_WAIT.
   */
  readonly force?: boolean;
}

/** What one pass did (visible in the workflow's history). */
export interface IssueInvoicesResult {
  readonly month: Month;
  /** Organizations owing an invoice for the month (usage or a paid plan) that had none. */
  readonly candidates: number;
  /** Invoices issued by this pass (another pass or run issuing one first is not counted). */
  readonly issued: number;
  /** Candidates left for a later pass: metering has not closed their whole month yet. */
  readonly waiting: number;
  /** Plan changes due by the month's end applied by this pass. */
  readonly planChanges: number;
  readonly runMs: number;
}

export function monthOf(at: Date): Month {
  return `${at.getUTCFullYear()}-${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The month before the one holding `at`. */
export function previousMonth(at: Date): Month {
  return monthOf(new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1)));
}

/** [start, end) of a month, UTC. */
export function monthPeriod(month: Month): { start: Date; end: Date } {
  if (!MONTH_PATTERN.test(month)) throw new Error(`a month is YYYY-MM, not ${month}`);
  const [year, m] = month.split('-').map(Number) as [number, number];
  return { start: new Date(Date.UTC(year, m - 1, 1)), end: new Date(Date.UTC(year, m, 1)) };
}
