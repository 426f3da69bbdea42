// Temporal Schedules the worker keeps: made on first start, brought up to date (spec and action) on every later
// one, so changing an interval in the configuration takes effect on the next start. Each platform job that
// runs by the clock (metering; invoicing's monthly close) is one entry of the worker's list.
import { ScheduleAlreadyRunning, type Client, type ScheduleOptions } from '@temporalio/client';

export type KilnSchedule = Pick<ScheduleOptions, 'scheduleId' | 'spec' | 'action'>;

/** One run at a time: a run still going when the next is due makes that one skip (runs catch up themselves). */
const POLICIES = { overlap: 'SKIP', catchupWindow: '1 minute' } as const;

export async function ensureSchedule(client: Client, schedule: KilnSchedule): Promise<void> {
  try {
    await client.schedule.create({ ...schedule, policies: POLICIES });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule.getHandle(schedule.scheduleId).update((previous) => ({ ...previous, spec: schedule.spec, action: schedule.action, policies: { ...previous.policies, ...POLICIES } }));
  }
}
