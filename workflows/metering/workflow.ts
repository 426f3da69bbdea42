// A metering run, started by the metering schedule (workflows/schedules.ts) every interval: one activity closes
// what is due. Exactly once lives in the database (one row per organization and interval), so a retried
// activity or an overlapping run charges nothing twice.
import { proxyActivities } from '@temporalio/workflow';
import type { MeteringResult } from '../contract/metering.ts';
import type { MeteringActivities } from './activities.ts';

const { closeDueIntervals } = proxyActivities<MeteringActivities>({
  startToCloseTimeout: '30 minutes',
  // A worker that dies mid-run is noticed within the heartbeat timeout (the run beats after each interval it
  // closes), and the retry finds what it closed closed. Until then the schedule skips its runs (overlap SKIP).
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 5 },
});

export async function meteringWorkflow(): Promise<MeteringResult> {
  return closeDueIntervals();
}
