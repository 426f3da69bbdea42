// One metering run: close every organization's due intervals (oldest first, each once), then stop the
// deployments of organizations whose credits ran out longer than the grace period ago. All I/O is here.
import type { MeteringResult, MeteringSettings } from '../contract/metering.ts';
import type { MeteringStore } from './store.ts';

export interface MeteringActivityDeps extends MeteringSettings {
  readonly store: MeteringStore;
  readonly now?: () => Date;
  /** Reports progress (Temporal's heartbeat in the worker); nothing in tests that call the activity directly. */
  readonly progress?: () => void;
}

/** At most this many intervals per organization in one run; a longer backlog is closed by the next runs. */
const MAX_INTERVALS_PER_RUN = 1_000;

export function createMeteringActivities(deps: MeteringActivityDeps) {
  const now = deps.now ?? (() => new Date());
  const progress = deps.progress ?? (() => undefined);
  return {
    async closeDueIntervals(): Promise<MeteringResult> {
      const started = Date.now();
      const at = now();
      const cutoff = new Date(at.getTime() - deps.settleMs);
      const due = await deps.store.dueOrganizations(cutoff, deps.intervalMs);
      let intervals = 0;
      let debitedCents = 0;
      for (const { organizationId, from } of due) {
        const billable = await deps.store.nextBillableStart(organizationId, from, cutoff, deps.intervalMs);
        if (billable > from) await deps.store.skipTo(organizationId, billable);
        let start = billable.getTime();
        for (let n = 0; n < MAX_INTERVALS_PER_RUN && start + deps.intervalMs <= cutoff.getTime(); n++, start += deps.intervalMs) {
          const closed = await deps.store.closeInterval(organizationId, new Date(start), new Date(start + deps.intervalMs), deps.graceMs);
          if (closed.closed) intervals += 1;
          debitedCents += closed.debitCents;
          // Each interval, however long a backlog: the heartbeat timeout then notices a dead worker within seconds.
          progress();
        }
        progress();
      }
      let stoppedOrganizations = 0;
      for (const organizationId of await deps.store.pastGrace(at, deps.graceMs)) {
        await deps.store.stopForCredits(organizationId, at);
        stoppedOrganizations += 1;
      }
      return { organizations: due.length, intervals, debitedCents, stoppedOrganizations, runMs: Date.now() - started };
    },
  };
}

export type MeteringActivities = ReturnType<typeof createMeteringActivities>;
