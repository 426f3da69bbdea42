// The monthly close, started by the invoicing schedule (workflows/schedules.ts) at 00:00 UTC on the 1st, or by
// hand for a given month. Metering closes an interval a settling time after it ends, so the month's last hours
// are drawn shortly after midnight: a pass issues the invoices of the organizations metering has finished,
// and the run passes again every WAIT_STEP until none waits, issuing the rest regardless after MAX_WAIT.
// Exactly once lives in the database (one invoice per organization and month), so a retried activity, a
// replayed workflow or a second run issues nothing twice.
import { log, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import { previousMonth, type InvoicingInput, type IssueInvoicesResult } from '../contract/invoicing.ts';
import type { InvoicingActivities } from './activities.ts';

const WAIT_STEP_MS = 10 * 60_000;
const MAX_WAIT_MS = 24 * 60 * 60_000;

const { issueInvoices } = proxyActivities<InvoicingActivities>({
  startToCloseTimeout: '1 hour',
  // A worker that dies mid-pass is noticed within the heartbeat timeout; the retry finds what it issued issued.
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 20, nonRetryableErrorTypes: ['InvalidMonth', 'MonthNotEnded'] },
});

export async function invoicingWorkflow(input: InvoicingInput = {}): Promise<IssueInvoicesResult> {
  const month = input.month ?? previousMonth(workflowInfo().startTime);
  let result = await issueInvoices({ month });
  for (let waited = 0; result.waiting > 0; waited += WAIT_STEP_MS) {
    const force = waited >= MAX_WAIT_MS;
    if (force) log.warn('metering has not closed the month for some organizations; invoicing them as metered so far', { month, waiting: result.waiting });
    else await sleep(WAIT_STEP_MS);
    const pass = await issueInvoices({ month, force });
    result = { ...pass, issued: result.issued + pass.issued, planChanges: result.planChanges + pass.planChanges, runMs: result.runMs + pass.runMs };
  }
  return result;
}
