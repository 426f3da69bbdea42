// Temporal Schedules the worker keeps: made on first start, brought up to date (spec and action) on every later
// one, so changing an interval in the configuration takes effect on the next start. Each platform job that
// runs by the clock (alert evaluation, optimization auto-apply, metering, invoicing's monthly close) is one entry
// of the worker's list: every timed job runs this one way.
import { ScheduleAlreadyRunning, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Duration } from '@temporalio/common';

export type KilnSchedule = Pick<ScheduleOptions, 'scheduleId' | 'spec' | 'action'> & {
  /** How late a run missed while Temporal was away is still started (1 minute when absent: the next run catches up). */
  readonly catchupWindow?: Duration;
};

/** One run at a time: a run still going when the next is due makes that one skip (runs catch up themselves). */
const POLICIES = { overlap: 'SKIP', catchupWindow: '1 minute' } as const;

export async function ensureSchedule(client: Client, { catchupWindow, ...schedule }: KilnSchedule): Promise<void> {
  const policies = { ...POLICIES, ...(catchupWindow ? { catchupWindow } : {}) };
  try {
    await client.schedule.create({ ...schedule, policies });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule.getHandle(schedule.scheduleId).update((previous) => ({ ...previous, spec: schedule.spec, action: schedule.action, policies: { ...previous.policies, ...policies } }));
  }
}
