// One pass over every organization's alert rules, started by the alert schedule (workflows/schedules.ts) every
// KILN_ALERT_INTERVAL_SECONDS: one activity (all I/O there). One pass for all organizations rather than one
// each: it asks Prometheus once per organization and figure whatever the number of rules, reads the rules in one
// query and writes their states in one statement, and there is one run to watch in the Temporal UI. A pass that
// keeps failing (Prometheus or the database away) fails its run; the schedule's next run tries again.
import { proxyActivities } from '@temporalio/workflow';
import type { AlertEvaluationResult } from '../contract/alerts.ts';
import type { AlertActivities } from './activities.ts';

const { evaluateAlertRules } = proxyActivities<AlertActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
});

export async function alertEvaluationWorkflow(): Promise<AlertEvaluationResult> {
  return evaluateAlertRules();
}
