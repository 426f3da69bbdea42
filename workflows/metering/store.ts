// What metering reads and writes in PostgreSQL, for every organization (the worker is not held by row-level
// security; its raw rows carry timestamps as text, read with new Date). Closing an interval is one transaction under the organization's row lock: its usage, its charges,
// the metered total, the debit (the credit ledger's, once per interval) and the low-balance notices. A second
// close of the same interval (a retried activity, a replayed workflow, another worker) finds it closed and
// changes nothing.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { centsCrossed, lowBalanceThreshold } from '../../catalog/billing.ts';
import { gpusRunningAt, usageBetween } from '../../lib/billing/usage.ts';
import { newId } from '../../lib/ids.ts';
import { moveCredits } from '../../control-plane/billing/credit-ledger.ts';
import { notifyMembers, OWNERS_AND_ADMINS } from '../notifications.ts';
import { stopRunningDeployments } from '../deployment/system-stop.ts';

/** The audit record's user for what billing does on its own (stopping deployments when credits ran out). */
export const SYSTEM_ACTOR = 'system:billing';

export interface DueOrganization {
  readonly organizationId: string;
  /** Start of its next interval to close. */
  readonly from: Date;
}

export interface ClosedInterval {
  /** false when it was closed already. */
  readonly closed: boolean;
  readonly debitCents: number;
}

interface LockedOrganization {
  credits_cents: number;
  metered_units: string;
  metered_until: string | null;
  last_top_up_cents: number;
  low_balance_percent: number | null;
  credits_exhausted_at: string | null;
}


export function meteringStore(orm: MikroORM) {
  return {
    /**
     * Organizations with an interval of `lengthMs` that ends by `cutoff`: those metered before, from where
     * they stopped; the others from the interval of their first replica record.
     */
    async dueOrganizations(cutoff: Date, lengthMs: number): Promise<DueOrganization[]> {
      const rows = await orm.em.fork().getConnection().execute<Array<{ id: string; from_ms: string }>>(`
        SELECT o.id, coalesce(floor(extract(epoch FROM o.metered_until) * 1000), floor(extract(epoch FROM first.at) * 1000 / ?) * ?)::bigint AS from_ms
        FROM organization o
        CROSS JOIN LATERAL (SELECT min(observed_at) AS at FROM replica_record r WHERE r.organization_id = o.id) first
        WHERE first.at IS NOT NULL AND (o.metered_until IS NULL OR o.metered_until <= ?::timestamptz - ? * interval '1 millisecond')
        ORDER BY o.id`, [lengthMs, lengthMs, cutoff, lengthMs]);
      return rows.map((row) => ({ organizationId: row.id, from: new Date(Number(row.from_ms)) }))
        .filter((due) => due.from.getTime() + lengthMs <= cutoff.getTime());
    },

    /**
     * Where the organization's next interval with anything to charge can start, at or after `from`: `from` itself
     * while replicas run then; else the interval of its next record, or the last whole interval before `cutoff`
     * when there is none. Metering moves past idle time in one step instead of an interval at a time.
     */
    async nextBillableStart(organizationId: string, from: Date, cutoff: Date, lengthMs: number): Promise<Date> {
      const em = orm.em.fork();
      if ((await gpusRunningAt(em, organizationId, from)).length > 0) return from;
      const [next] = await em.execute<Array<{ at: string | null }>>(
        'SELECT min(observed_at) AS at FROM replica_record WHERE organization_id = ? AND observed_at > ?', [organizationId, from]);
      const until = Math.min(next?.at ? new Date(next.at).getTime() : Infinity, cutoff.getTime());
      return new Date(from.getTime() + Math.floor((until - from.getTime()) / lengthMs) * lengthMs);
    },

    /** Records that the organization had nothing to charge before `to`, unless metering has come further. */
    async skipTo(organizationId: string, to: Date): Promise<void> {
      await orm.em.fork().getConnection().execute(
        'UPDATE organization SET metered_until = ? WHERE id = ? AND (metered_until IS NULL OR metered_until < ?)', [to, organizationId, to]);
    },

    /** Closes [from, to) for the organization, once. */
    async closeInterval(organizationId: string, from: Date, to: Date, graceMs: number): Promise<ClosedInterval> {
      return orm.em.fork().transactional(async (em) => {
        const [org] = await em.execute<LockedOrganization[]>(
          `SELECT credits_cents, metered_units, metered_until, last_top_up_cents, low_balance_percent, credits_exhausted_at FROM organization WHERE id = ? FOR UPDATE`, [organizationId]);
        if (!org || (org.metered_until && new Date(org.metered_until) >= to)) return { closed: false, debitCents: 0 };
        const usage = await usageBetween(em, organizationId, from, to);
        const units = usage.reduce((sum, u) => sum + u.usageUnits, 0);
        if (units === 0) {
          // Nothing ran: nothing to charge or keep but how far metering has come.
          await em.execute('UPDATE organization SET metered_until = ? WHERE id = ?', [to, organizationId]);
          return { closed: true, debitCents: 0 };
        }
        const metered = Number(org.metered_units);
        const debitCents = centsCrossed(metered, metered + units);
        const intervalId = newId('usi');
        const inserted = await em.execute<Array<{ id: string }>>(
          `INSERT INTO usage_interval (id, created_at, organization_id, starts_at, ends_at, usage_units, debit_cents) VALUES (?, now(), ?, ?, ?, ?, ?)
           ON CONFLICT (organization_id, starts_at) DO NOTHING RETURNING id`, [intervalId, organizationId, from, to, units, debitCents]);
        if (inserted.length === 0) return { closed: false, debitCents: 0 };
        await em.execute(
          `INSERT INTO usage_charge (id, created_at, organization_id, interval_id, starts_at, deployment_id, deployment_name, gpu, gpu_ms, rate_cents_per_hour, usage_units)
           VALUES ${usage.map(() => '(?, now(), ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
          usage.flatMap((u) => [newId('usc'), organizationId, intervalId, from, u.deploymentId, u.deploymentName, u.gpu, u.gpuMs, u.rateCentsPerHour, u.usageUnits]));
        await em.execute('UPDATE organization SET metered_units = metered_units + ?, metered_until = ? WHERE id = ?', [units, to, organizationId]);
        if (debitCents === 0) return { closed: true, debitCents };
        const { balanceCents } = await moveCredits(em, {
          organizationId, kind: 'debit', amountCents: -debitCents, reference: `usage:${intervalId}`,
          description: `GPU usage ${from.toISOString()} to ${to.toISOString()}`,
        });
        await noticeBalance(em, organizationId, org, balanceCents, to, graceMs);
        return { closed: true, debitCents };
      });
    },

    /** Organizations whose credits ran out more than the grace period before `at`, with deployments not yet stopped for it. */
    async pastGrace(at: Date, graceMs: number): Promise<string[]> {
      const rows = await orm.em.fork().getConnection().execute<Array<{ id: string }>>(
        `SELECT id FROM organization WHERE credits_cents <= 0 AND credits_stopped_at IS NULL AND credits_exhausted_at <= ?::timestamptz - ? * interval '1 millisecond' ORDER BY id`,
        [at, graceMs]);
      return rows.map((row) => row.id);
    },

    /** Stops the organization's deployments for want of credits, once (a top-up in between cancels it). */
    async stopForCredits(organizationId: string, at: Date): Promise<number> {
      return orm.em.fork().transactional(async (em) => {
        const [org] = await em.execute<Array<{ credits_cents: number; last_top_up_cents: number; credits_exhausted_at: string | null; credits_stopped_at: string | null }>>(
          'SELECT credits_cents, last_top_up_cents, credits_exhausted_at, credits_stopped_at FROM organization WHERE id = ? FOR UPDATE', [organizationId]);
        if (!org || org.credits_cents > 0 || !org.credits_exhausted_at || org.credits_stopped_at) return 0;
        const stopped = await stopRunningDeployments(em, {
          organizationId, actor: SYSTEM_ACTOR, at,
          details: { reason: 'credits exhausted', exhaustedAt: new Date(org.credits_exhausted_at).toISOString(), balanceCents: org.credits_cents },
        });
        await em.execute('UPDATE organization SET credits_stopped_at = ? WHERE id = ?', [at, organizationId]);
        await notifyMembers(em, organizationId, OWNERS_AND_ADMINS, 'credits.stopped', {
          message: `Your credits ran out on ${new Date(org.credits_exhausted_at).toISOString()} and the grace period has ended: Kiln stopped ${stopped} running deployment(s). Add credits, then start them again.`,
          balanceCents: org.credits_cents, lastTopUpCents: org.last_top_up_cents, stoppedDeployments: stopped,
        });
        return stopped;
      });
    },
  };
}

/** After a debit: tell the organization when the balance reaches a low threshold, once each, and when it runs out. */
async function noticeBalance(em: EntityManager, organizationId: string, org: LockedOrganization, balanceCents: number, at: Date, graceMs: number): Promise<void> {
  const threshold = lowBalanceThreshold(balanceCents, org.last_top_up_cents);
  if (balanceCents > 0 && threshold !== null && (org.low_balance_percent === null || threshold < org.low_balance_percent)) {
    await em.execute('UPDATE organization SET low_balance_percent = ? WHERE id = ?', [threshold, organizationId]);
    await notifyMembers(em, organizationId, OWNERS_AND_ADMINS, 'credits.low', {
      message: `Your credit balance is down to ${balanceCents} cents, ${threshold}% or less of your last top-up. Add credits to keep deployments running.`,
      balanceCents, lastTopUpCents: org.last_top_up_cents, thresholdPercent: threshold,
    });
  }
  if (balanceCents <= 0 && !org.credits_exhausted_at) {
    const graceEndsAt = new Date(at.getTime() + graceMs).toISOString();
    await em.execute('UPDATE organization SET credits_exhausted_at = ?, low_balance_percent = 0 WHERE id = ?', [at, organizationId]);
    await notifyMembers(em, organizationId, OWNERS_AND_ADMINS, 'credits.exhausted', {
      message: `Your credits have run out. New deployments, scale-ups and starts are refused; running deployments will be stopped at ${graceEndsAt} unless you add credits.`,
      balanceCents, lastTopUpCents: org.last_top_up_cents, graceEndsAt,
    });
  }
}

export type MeteringStore = ReturnType<typeof meteringStore>;
