// One pass of the monthly close: an invoice for each organization owing one for the month (usage or a paid plan),
// once, then the plan changes due by the month's end. All I/O is here; the workflow decides when to pass again.
import { ApplicationFailure } from '@temporalio/activity';
import { monthPeriod, MONTH_PATTERN, type IssueInvoicesInput, type IssueInvoicesResult } from '../contract/invoicing.ts';
import type { InvoicingStore } from './store.ts';

export interface InvoicingActivityDeps {
  readonly store: InvoicingStore;
  readonly now?: () => Date;
  /** Reports progress (Temporal's heartbeat in the worker); nothing in tests and benches that call the activity directly. */
  readonly progress?: () => void;
  /** Organizations issued at once, each on a connection of its own (the ORM's pool holds 10). */
  readonly concurrency?: number;
}

const CONCURRENCY = 4;

export function createInvoicingActivities(deps: InvoicingActivityDeps) {
  const now = deps.now ?? (() => new Date());
  const progress = deps.progress ?? (() => undefined);
  return {
    async issueInvoices(input: IssueInvoicesInput): Promise<IssueInvoicesResult> {
      const started = Date.now();
      if (!MONTH_PATTERN.test(input.month)) throw ApplicationFailure.nonRetryable(`a month is YYYY-MM, not ${input.month}`, 'InvalidMonth');
      const period = monthPeriod(input.month);
      const at = now();
      // An invoice is final: one for a month still running would leave the rest of its usage on none.
      if (period.end > at) throw ApplicationFailure.nonRetryable(`${input.month} has not ended yet`, 'MonthNotEnded');
      const candidates = await deps.store.candidates(period);
      const due = candidates.filter((candidate) => candidate.ready || input.force);
      const waiting = candidates.length - due.length;
      let issued = 0;
      let planChanges = 0;
      // A few organizations at a time: each is its own transaction under its own row lock, so they never meet.
      let next = 0;
      await Promise.all(Array.from({ length: Math.min(deps.concurrency ?? CONCURRENCY, due.length) }, async () => {
        while (next < due.length) {
          const outcome = await deps.store.issue(due[next++]!.organizationId, period, at).catch((error: unknown) => {
            next = due.length; // the others stop too: the activity fails, and its retry takes up what is left
            throw error;
          });
          if (outcome.issued) issued += 1;
          if (outcome.planChanged) planChanges += 1;
          progress();
        }
      }));
      // The organizations with no invoice for the month change plan too, once none is left to issue: an invoice
      // still waiting is for the plan the organization had over the month.
      if (waiting === 0) planChanges += await deps.store.applyDuePlanChanges(period.end);
      return { month: input.month, candidates: candidates.length, issued, waiting, planChanges, runMs: Date.now() - started };
    },
  };
}

export type InvoicingActivities = ReturnType<typeof createInvoicingActivities>;
