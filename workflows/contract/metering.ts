// Contract of metering: a Temporal Schedule (id METERING_SCHEDULE_ID, made by the worker, workflows/schedules.ts)
// starts METERING_WORKFLOW every metering interval; each run closes every organization's intervals that are
// due and draws their cost from the credit balance, once per interval.
export const METERING_TASK_QUEUE = 'kiln-metering';
export const METERING_WORKFLOW = 'meteringWorkflow';
export const METERING_SCHEDULE_ID = 'kiln-metering';

/** What one run did (visible in the workflow's history). */
export interface MeteringResult {
  /** Organizations with an interval due. */
  readonly organizations: number;
  /** Intervals closed in this run (those another run closed first are not counted). */
  readonly intervals: number;
  readonly debitedCents: number;
  /** Organizations whose deployments were stopped because the grace period after their credits ran out ended. */
  readonly stoppedOrganizations: number;
  readonly runMs: number;
}

/** The worker's metering settings. */
export interface MeteringSettings {
  /** Length of a metering interval, and how often the schedule starts a run (KILN_METERING_INTERVAL_SECONDS). */
  readonly intervalMs: number;
  /** How long after an interval ends it is closed, so status records written late still land in it (KILN_METERING_SETTLE_SECONDS). */
  readonly settleMs: number;
  /** How long deployments keep running after the credits ran out (KILN_CREDITS_GRACE_SECONDS). */
  readonly graceMs: number;
}
