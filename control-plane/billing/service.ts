// Reads of billing: the credit ledger with its balance, and the current period's usage (live, to the
// millisecond, through the same usage query metering closes intervals with, lib/billing/usage.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { billingPeriod, gpuCentsPerHour, unitsToCents } from '../../catalog/billing.ts';
import { gpusRunningAt, usageBetween } from '../../lib/billing/usage.ts';
import type { Principal } from '../auth/principal.ts';
import { INFERENCE_CALLS } from '../monitoring/analytics.ts';
import type { CursorCodec } from '../core/pagination.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { CreditEntrySchema, type CreditEntry } from './credit-entry.entity.ts';
import type { CreditsBody, CreditsInput, UsageBody } from './schemas.ts';

const ORDERING = 'credits:-created_at,-id';
const MS_PER_HOUR = 3_600_000;
const iso = (value: Date | string | null | undefined) => (value ? new Date(value).toISOString() : null);

export function createBillingService(deps: { cursors: CursorCodec; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());
  const view = (e: CreditEntry) => ({
    id: e.id, kind: e.kind, amountCents: e.amountCents, balanceAfterCents: e.balanceAfterCents, description: e.description, reference: e.reference, createdAt: e.createdAt.toISOString(),
  });

  return {
    async credits(em: EntityManager, principal: Principal, query: CreditsInput): Promise<CreditsBody> {
      const organizationId = principal.organizationId;
      const after = query.cursor ? JSON.parse(deps.cursors.decode(query.cursor, ORDERING)) as [string, string] : undefined;
      const [organization, rows, totals] = await Promise.all([
        em.findOneOrFail(OrganizationSchema, organizationId),
        em.find(CreditEntrySchema, {
          organization: organizationId, ...(query.kind ? { kind: query.kind } : {}),
          ...(after ? { $or: [{ createdAt: { $lt: new Date(after[0]) } }, { createdAt: new Date(after[0]), id: { $lt: after[1] } }] } : {}),
        }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: query.limit + 1 }),
        em.getConnection().execute<Array<{ kind: string; cents: string }>>(
          'SELECT kind, coalesce(sum(amount_cents), 0)::bigint AS cents FROM credit_entry WHERE organization_id = ? GROUP BY kind', [organizationId]),
      ]);
      const sum = (kind: string) => Number(totals.find((t) => t.kind === kind)?.cents ?? 0);
      const page = deps.cursors.page(rows, query.limit, ORDERING, (e) => [e.createdAt, e.id]);
      return {
        balanceCents: organization.creditsCents,
        lastTopUpCents: organization.lastTopUpCents,
        lowBalancePercent: organization.lowBalancePercent ?? null,
        exhaustedAt: iso(organization.creditsExhaustedAt),
        deploymentsStoppedAt: iso(organization.creditsStoppedAt),
        totals: { grantedCents: sum('grant'), toppedUpCents: sum('top_up'), debitedCents: -sum('debit'), adjustedCents: sum('adjustment') },
        entries: page.items.map(view),
        pagination: { hasMore: page.hasMore, nextCursor: page.nextCursor },
      };
    },

    async usage(em: EntityManager, principal: Principal): Promise<UsageBody> {
      const organizationId = principal.organizationId;
      const at = now();
      const period = billingPeriod(at);
      const [organization, usage, running, tokens, drawn] = await Promise.all([
        em.findOneOrFail(OrganizationSchema, organizationId),
        usageBetween(em, organizationId, period.start, at),
        gpusRunningAt(em, organizationId, at),
        em.execute<Array<{ deployment_id: string; requests: number; prompt: number; completion: number }>>(`
          SELECT resource_id AS deployment_id, count(*)::int AS requests,
                 coalesce(sum((details->>'promptTokens')::int), 0)::int AS prompt, coalesce(sum((details->>'completionTokens')::int), 0)::int AS completion
          FROM audit_log a WHERE organization_id = ? AND created_at >= ? AND created_at < ? AND ${INFERENCE_CALLS}
          GROUP BY resource_id`, [organizationId, period.start, at]),
        em.execute<Array<{ cents: string }>>(
          'SELECT coalesce(sum(debit_cents), 0)::bigint AS cents FROM usage_interval WHERE organization_id = ? AND starts_at >= ? AND starts_at < ?', [organizationId, period.start, period.end]),
      ]);
      const served = new Map(tokens.map((row) => [row.deployment_id, row]));
      const totalUnits = usage.reduce((sum, u) => sum + u.usageUnits, 0);
      const gpuTypes = new Map<string, { gpuMs: number; units: number }>();
      for (const u of usage) {
        const sum = gpuTypes.get(u.gpu) ?? { gpuMs: 0, units: 0 };
        gpuTypes.set(u.gpu, { gpuMs: sum.gpuMs + u.gpuMs, units: sum.units + u.usageUnits });
      }
      // What runs now costs this many cents an hour; for `ms` more milliseconds that is hourlyCents x ms units.
      const hourlyCents = running.reduce((sum, r) => sum + r.gpus * gpuCentsPerHour(r.gpu), 0);
      const remainingMs = Math.max(0, period.end.getTime() - at.getTime());
      return {
        period: { start: period.start.toISOString(), end: period.end.toISOString() },
        asOf: at.toISOString(),
        deployments: usage.map((u) => ({
          deploymentId: u.deploymentId, name: u.deploymentName, gpu: u.gpu, gpuHours: u.gpuMs / MS_PER_HOUR, rateCentsPerGpuHour: u.rateCentsPerHour,
          costCents: unitsToCents(u.usageUnits), requests: served.get(u.deploymentId)?.requests ?? 0,
          promptTokens: served.get(u.deploymentId)?.prompt ?? 0, completionTokens: served.get(u.deploymentId)?.completion ?? 0,
        })),
        gpuTypes: [...gpuTypes].map(([gpu, sum]) => ({ gpu, gpuHours: sum.gpuMs / MS_PER_HOUR, costCents: unitsToCents(sum.units) })),
        totalCents: unitsToCents(totalUnits),
        drawnCents: Number(drawn[0]?.cents ?? 0),
        projection: { hourlyRateCents: hourlyCents, periodEndCents: unitsToCents(totalUnits + hourlyCents * remainingMs) },
        balanceCents: organization.creditsCents,
      };
    },
  };
}

export type BillingService = ReturnType<typeof createBillingService>;
