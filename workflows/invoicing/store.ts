// What invoicing reads and writes in PostgreSQL, for every organization (the worker is not held by row-level
// security). Issuing is one transaction per organization under its row lock: the lines from the period's usage
// charges, the credits its metering debits drew, the next number, the invoice (ON CONFLICT on the organization
// and period: issued once, whoever runs first), and the plan change due by the period's end. A retried activity,
// a replayed workflow or an overlapping run finds the invoice there and changes nothing.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { unitsToCents } from '../../catalog/billing.ts';
import { PAID_PLANS, PLAN_TERMS, PLANS, type Plan } from '../../catalog/plans.ts';
import { newId } from '../../lib/ids.ts';
import type { InvoiceLine } from '../../control-plane/invoices/invoice.entity.ts';
import { notifyMembers, OWNERS_AND_ADMINS } from '../notifications.ts';

export interface Period {
  readonly start: Date;
  readonly end: Date;
}

export interface InvoiceCandidate {
  readonly organizationId: string;
  /** Metering has closed the organization's whole period (or it held no GPUs before the period's end). */
  readonly ready: boolean;
}

export interface IssueOutcome {
  /** false: the period was invoiced already, or nothing is owed for it. */
  readonly issued: boolean;
  readonly planChanged: boolean;
}

/** What an invoice says, from the period's rows. */
export interface InvoiceFigures {
  readonly plan: Plan;
  readonly planFeeCents: number;
  readonly usageCents: number;
  readonly creditsAppliedCents: number;
  readonly totalCents: number;
  readonly lines: InvoiceLine[];
}

/** The plan's fee, the usage (the lines' sum), the credits applied and the total, never below zero. */
export function invoiceFigures(plan: string, lines: InvoiceLine[], creditsAppliedCents: number): InvoiceFigures {
  if (!(PLANS as readonly string[]).includes(plan)) throw new Error(`unknown plan ${plan}`);
  const planFeeCents = PLAN_TERMS[plan as Plan].monthlyPriceCents;
  const usageCents = lines.reduce((sum, line) => sum + line.amountCents, 0);
  return { plan: plan as Plan, planFeeCents, usageCents, creditsAppliedCents, totalCents: Math.max(0, planFeeCents + usageCents - creditsAppliedCents), lines };
}

interface LineRow {
  deployment_id: string;
  deployment_name: string;
  gpu: string;
  rate_cents_per_hour: number;
  gpu_ms: string;
  usage_units: string;
}

/** Plan changes due by `periodEnd` take effect: of one organization, or of all. Answers how many changed. */
async function applyDuePlans(em: EntityManager, periodEnd: Date, organizationId?: string): Promise<number> {
  const changed = await em.execute<Array<{ id: string }>>(
    `UPDATE organization SET plan = pending_plan, pending_plan = NULL, pending_plan_at = NULL
     WHERE pending_plan IS NOT NULL AND pending_plan_at <= ?${organizationId ? ' AND id = ?' : ''} RETURNING id`,
    organizationId ? [periodEnd, organizationId] : [periodEnd]);
  return changed.length;
}

export function invoicingStore(orm: MikroORM) {
  /** The plan an organization had over a period starting at `?`: a change due before the period began and not yet applied counts. */
  const PLAN_OVER = 'CASE WHEN o.pending_plan IS NOT NULL AND o.pending_plan_at <= ? THEN o.pending_plan ELSE o.plan END';

  return {
    /** Organizations owing an invoice for the period that have none: usage charged in it, or a paid plan over it. */
    async candidates(period: Period): Promise<InvoiceCandidate[]> {
      const rows = await orm.em.fork().execute<Array<{ id: string; ready: boolean }>>(`
        SELECT o.id,
               (o.metered_until >= ? OR NOT EXISTS (SELECT 1 FROM replica_record r WHERE r.organization_id = o.id AND r.observed_at < ?)) IS TRUE AS ready
        FROM organization o
        WHERE o.created_at < ?
          AND NOT EXISTS (SELECT 1 FROM invoice i WHERE i.organization_id = o.id AND i.period_start = ?)
          AND (${PLAN_OVER} IN (${PAID_PLANS.map(() => '?').join(', ')})
               OR EXISTS (SELECT 1 FROM usage_charge c WHERE c.organization_id = o.id AND c.starts_at >= ? AND c.starts_at < ?))
        ORDER BY o.id`,
      [period.end, period.end, period.end, period.start, period.start, ...PAID_PLANS, period.start, period.end]);
      return rows.map((row) => ({ organizationId: row.id, ready: row.ready }));
    },

    /** Issues the organization's invoice for the period, once, numbered after its last; then applies its plan change due by the period's end. */
    async issue(organizationId: string, period: Period, issuedAt: Date): Promise<IssueOutcome> {
      return orm.em.fork().transactional(async (em) => {
        const [organization] = await em.execute<Array<{ plan: string }>>(
          `SELECT ${PLAN_OVER} AS plan FROM organization o WHERE o.id = ? FOR UPDATE`, [period.start, organizationId]);
        if (!organization) throw new Error(`organization ${organizationId} not found`);
        const [existing] = await em.execute('SELECT 1 FROM invoice WHERE organization_id = ? AND period_start = ?', [organizationId, period.start]);
        if (existing) return { issued: false, planChanged: false };

        const lineRows = await em.execute<LineRow[]>(`
          SELECT deployment_id, gpu, rate_cents_per_hour, (array_agg(deployment_name ORDER BY starts_at DESC, id DESC))[1] AS deployment_name,
                 sum(gpu_ms)::text AS gpu_ms, sum(usage_units)::text AS usage_units
          FROM usage_charge WHERE organization_id = ? AND starts_at >= ? AND starts_at < ?
          GROUP BY deployment_id, gpu, rate_cents_per_hour
          ORDER BY deployment_name, deployment_id, gpu, rate_cents_per_hour`, [organizationId, period.start, period.end]);
        const lines: InvoiceLine[] = lineRows.map((row) => ({
          deploymentId: row.deployment_id, deploymentName: row.deployment_name, gpu: row.gpu, gpuMs: Number(row.gpu_ms),
          rateCentsPerHour: row.rate_cents_per_hour, usageUnits: Number(row.usage_units), amountCents: unitsToCents(Number(row.usage_units)),
        }));
        // Each metering debit drew from credits only what the balance held before it: min(debit, balance before), never below 0.
        const [credits] = await em.execute<Array<{ cents: string }>>(`
          SELECT coalesce(sum(greatest(0, least(-c.amount_cents, c.balance_after_cents - c.amount_cents))), 0)::text AS cents
          FROM usage_interval u JOIN credit_entry c ON c.organization_id = u.organization_id AND c.reference = 'usage:' || u.id
          WHERE u.organization_id = ? AND u.starts_at >= ? AND u.starts_at < ? AND c.kind = 'debit'`, [organizationId, period.start, period.end]);
        const figures = invoiceFigures(organization.plan, lines, Number(credits?.cents ?? 0));
        if (figures.planFeeCents === 0 && lines.length === 0) return { issued: false, planChanged: false };

        const [next] = await em.execute<Array<{ number: number }>>('SELECT coalesce(max(number), 0)::int + 1 AS number FROM invoice WHERE organization_id = ?', [organizationId]);
        const inserted = await em.execute<Array<{ id: string }>>(`
          INSERT INTO invoice (id, created_at, organization_id, number, period_start, period_end, plan, plan_fee_cents, usage_cents, credits_applied_cents, total_cents, currency, lines, issued_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'usd', ?::jsonb, ?)
          ON CONFLICT (organization_id, period_start) DO NOTHING RETURNING id`,
        [newId('ivc'), issuedAt, organizationId, next!.number, period.start, period.end, figures.plan, figures.planFeeCents, figures.usageCents,
          figures.creditsAppliedCents, figures.totalCents, JSON.stringify(figures.lines), issuedAt]);
        if (inserted.length === 0) return { issued: false, planChanged: false };
        await notifyMembers(em, organizationId, OWNERS_AND_ADMINS, 'invoice.issued', {
          message: `Your invoice for ${period.start.toISOString().slice(0, 7)} is issued: ${(figures.totalCents / 100).toFixed(2)} USD.`,
          invoiceId: inserted[0]!.id, sequence: next!.number, totalCents: figures.totalCents, currency: 'usd',
          periodStart: period.start.toISOString(), periodEnd: period.end.toISOString(),
        });
        const planChanged = await applyDuePlans(em, period.end, organizationId) > 0;
        return { issued: true, planChanged };
      });
    },

    /** Applies every plan change due by the period's end (once every invoice of the period is issued). */
    async applyDuePlanChanges(periodEnd: Date): Promise<number> {
      return applyDuePlans(orm.em.fork(), periodEnd);
    },
  };
}

export type InvoicingStore = ReturnType<typeof invoicingStore>;
