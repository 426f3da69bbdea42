// Platform administration: views across every organization (customers, security, operations,
// analytics) and bulk deployment actions. Only platform administrators reach it (admin:* permissions);
// it reads with plain SQL aggregates rather than loading entities, since it spans the whole platform.
import type { CircuitView } from '../recovery/circuits.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Principal } from '../auth/principal.ts';
import { LIVE_STATUSES, type DeploymentStatus } from '../deployments/deployment.entity.ts';
import { DEPLOYMENT_STATUSES } from '../../workflows/contract/deployment.ts';
import type { DeploymentOrchestrator, WorkflowInspection } from '../deployments/orchestrator.ts';
import type { DeploymentService } from '../deployments/service.ts';
import { ApiError, DeploymentNotFoundError, describeError } from '../core/errors.ts';
import type { CursorCodec } from '../core/pagination.ts';
import { SIGNIN_FAILURES } from '../http/rate-limit.ts';
import { findGpuType } from '../../catalog/gpu-types.ts';
import { PLAN_MONTHLY_PRICE_CENTS } from '../../catalog/plans.ts';
import { PLANS, type Plan } from '../../catalog/plans.ts';
import type { AnalyticsInput, BulkActionInput, BulkItemResultBody, ListCustomersInput, RevenueOverviewBody } from './schemas.ts';

/** Keys older than this without a rotation are reported. */
export const KEY_ROTATION_DAYS = 90;
const LIST_LIMIT = 100;
const FAILED_WORKFLOWS_LIMIT = 50;
const DAY_MS = 86_400_000;
const HOURS_30_DAYS = 720;

/** An open circuit breaker as the GPU-cluster area reports it. */

export interface AdminServiceDeps {
  cursors: CursorCodec;
  deployments: Pick<DeploymentService, 'act' | 'remove'>;
  orchestrator: Pick<DeploymentOrchestrator, 'inspect'>;
  log: Pick<Logger, 'error'>;
  /** The provisioning circuits that are not closed (open or half-open). */
  openCircuits: (em: EntityManager) => Promise<CircuitView[]>;
  /** The Temporal Web UI's base URL: each failed deployment links to its workflow there. */
  temporalUiUrl?: string | undefined;
}

const CUSTOMERS_ORDERING = 'customers:-created_at,-id';

export function createAdminService(deps: AdminServiceDeps) {
  const sql = <T>(em: EntityManager, query: string, params: unknown[] = []) => em.getConnection().execute<T[]>(query, params);

  // Temporal being slow or away (the orchestrator's deadline) must not fail the page: the workflow column is then null.
  const inspect = (deploymentId: string): Promise<WorkflowInspection | null> => deps.orchestrator.inspect(deploymentId).catch(() => null);

  return {
    /** Organizations, newest first, with plan, members, live deployments by status and usage. */
    async customers(em: EntityManager, query: ListCustomersInput) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (query.plan) { where.push('o.plan = ?'); params.push(query.plan); }
      if (query.cursor) {
        const [createdAt, id] = JSON.parse(deps.cursors.decode(query.cursor, CUSTOMERS_ORDERING)) as [string, string];
        where.push('(o.created_at, o.id) < (?, ?)');
        params.push(new Date(createdAt), id);
      }
      const rows = await sql<CustomerRow>(em, `
        SELECT o.id, o.name, o.plan, o.credits_cents, o.created_at,
          (SELECT count(*)::int FROM membership m WHERE m.organization_id = o.id) AS members,
          (SELECT coalesce(jsonb_object_agg(s.status, s.n), '{}'::jsonb) FROM
            (SELECT d.status, count(*)::int AS n FROM deployment d WHERE d.organization_id = o.id AND d.deleted_at IS NULL GROUP BY d.status) s) AS deployments,
          (SELECT count(*)::int FROM audit_log a WHERE a.organization_id = o.id AND a.created_at >= now() - interval '30 days') AS requests_30d,
          (SELECT max(a.created_at) FROM audit_log a WHERE a.organization_id = o.id) AS last_activity_at
        FROM organization o ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY o.created_at DESC, o.id DESC LIMIT ?`, [...params, query.limit + 1]);
      const customers = rows.map((r) => ({
        id: r.id, name: r.name, plan: r.plan, createdAt: iso(r.created_at), members: r.members,
        deployments: { total: Object.values(r.deployments).reduce((a, b) => a + b, 0), byStatus: r.deployments },
        usage: { requestsLast30Days: r.requests_30d, lastActivityAt: r.last_activity_at ? iso(r.last_activity_at) : null, creditsCents: r.credits_cents },
      }));
      return deps.cursors.page(customers, query.limit, CUSTOMERS_ORDERING, (c) => [c.createdAt, c.id]);
    },

    /**
     * Failed sign-ins in the current window, locked accounts, API keys not rotated for 90 days and keys never
     * used, and every service role key with its last use.
     */
    async security(em: EntityManager) {
      const prefix = `${SIGNIN_FAILURES.keyPrefix}:`;
      const failures = await sql<{ key: string; points: number; expire: string | null }>(em, `
        SELECT key, points, expire FROM rate_limit
        WHERE key LIKE ? AND points > 0 AND (expire IS NULL OR expire > (extract(epoch from now()) * 1000)::bigint)
        ORDER BY points DESC, key LIMIT ?`, [`${prefix}%`, LIST_LIMIT]);
      const accounts = failures.map((f) => {
        const locked = f.points >= SIGNIN_FAILURES.points;
        const until = f.expire === null ? null : new Date(Number(f.expire)).toISOString();
        return { email: f.key.slice(prefix.length), failures: f.points, locked, windowEndsAt: until };
      });
      const keyColumns = `k.id, k.name, k.prefix, k.scope, k.organization_id, o.name AS organization_name, k.user_id, k.created_at, k.rotated_at, k.last_used_at`;
      const stale = `k.revoked_at IS NULL AND coalesce(k.rotated_at, k.created_at) < now() - make_interval(days => ?)`;
      const unused = 'k.revoked_at IS NULL AND k.last_used_at IS NULL';
      const [notRotated, notRotatedTotal, neverUsed, neverUsedTotal, serviceKeys, serviceKeysTotal] = await Promise.all([
        sql<KeyRow>(em, `SELECT ${keyColumns} FROM api_key k JOIN organization o ON o.id = k.organization_id WHERE ${stale} ORDER BY coalesce(k.rotated_at, k.created_at), k.id LIMIT ?`, [KEY_ROTATION_DAYS, LIST_LIMIT]),
        sql<{ n: number }>(em, `SELECT count(*)::int AS n FROM api_key k WHERE ${stale}`, [KEY_ROTATION_DAYS]),
        sql<KeyRow>(em, `SELECT ${keyColumns} FROM api_key k JOIN organization o ON o.id = k.organization_id WHERE ${unused} ORDER BY k.created_at, k.id LIMIT ?`, [LIST_LIMIT]),
        sql<{ n: number }>(em, `SELECT count(*)::int AS n FROM api_key k WHERE ${unused}`),
        sql<ServiceKeyRow>(em, `SELECT id, name, prefix, created_by_id, created_at, rotated_at, last_used_at FROM service_key WHERE revoked_at IS NULL ORDER BY created_at, id LIMIT ?`, [LIST_LIMIT]),
        sql<{ n: number }>(em, `SELECT count(*)::int AS n FROM service_key WHERE revoked_at IS NULL`),
      ]);
      return {
        failedSignins: { windowMinutes: SIGNIN_FAILURES.duration / 60, lockAfter: SIGNIN_FAILURES.points, accounts },
        lockedAccounts: accounts.filter((a) => a.locked).map((a) => ({ email: a.email, lockedUntil: a.windowEndsAt })),
        keysNotRotated: { olderThanDays: KEY_ROTATION_DAYS, total: notRotatedTotal[0]!.n, items: notRotated.map(keyView) },
        keysNeverUsed: { total: neverUsedTotal[0]!.n, items: neverUsed.map(keyView) },
        serviceKeys: { total: serviceKeysTotal[0]!.n, items: serviceKeys.map(serviceKeyView) },
      };
    },

    /** Deployments by status, failed rollouts with their reason and workflow, open circuits. */
    async operations(em: EntityManager) {
      const counts = await sql<{ status: DeploymentStatus; n: number }>(em, `SELECT status, count(*)::int AS n FROM deployment WHERE deleted_at IS NULL GROUP BY status`);
      const byStatus = Object.fromEntries(DEPLOYMENT_STATUSES.filter((s) => s !== 'deleted').map((s) => [s, 0])) as Record<string, number>;
      for (const c of counts) byStatus[c.status] = c.n;
      const failed = await sql<{ id: string; name: string; organization_id: string; organization_name: string; failure_reason: string | null; updated_at: Date }>(em, `
        SELECT d.id, d.name, d.organization_id, o.name AS organization_name, d.failure_reason, d.updated_at FROM deployment d JOIN organization o ON o.id = d.organization_id
        WHERE d.status = 'failed' AND d.deleted_at IS NULL ORDER BY d.updated_at DESC, d.id DESC LIMIT ?`, [FAILED_WORKFLOWS_LIMIT]);
      const failedWorkflows = await Promise.all(failed.map(async (d) => ({
        deploymentId: d.id, name: d.name, organizationId: d.organization_id, organizationName: d.organization_name, failureReason: d.failure_reason, failedAt: iso(d.updated_at),
        // The workflow id is the deployment id (workflows/contract/deployment.ts).
        workflowUrl: deps.temporalUiUrl ? `${deps.temporalUiUrl}/namespaces/default/workflows/${encodeURIComponent(d.id)}` : null,
        workflow: await inspect(d.id),
      })));
      return {
        deployments: { total: counts.reduce((a, c) => a + c.n, 0), byStatus },
        failedWorkflows,
        openCircuits: await deps.openCircuits(em),
      };
    },

    /** Daily sign-ups, active organizations (any audited request) and new deployments by GPU type. */
    async analytics(em: EntityManager, query: AnalyticsInput) {
      const { from, to } = query;
      const window = [new Date(`${from}T00:00:00Z`), new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS)];
      const day = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;
      const [signups, active, activeTotal, deployments] = await Promise.all([
        sql<{ day: string; n: number }>(em, `SELECT ${day} AS day, count(*)::int AS n FROM "user" WHERE created_at >= ? AND created_at < ? GROUP BY 1`, window),
        sql<{ day: string; n: number }>(em, `SELECT ${day} AS day, count(DISTINCT organization_id)::int AS n FROM audit_log WHERE created_at >= ? AND created_at < ? GROUP BY 1`, window),
        sql<{ n: number }>(em, `SELECT count(DISTINCT organization_id)::int AS n FROM audit_log WHERE created_at >= ? AND created_at < ?`, window),
        sql<{ day: string; gpu: string; n: number }>(em, `SELECT ${day} AS day, gpu, count(*)::int AS n FROM deployment WHERE created_at >= ? AND created_at < ? GROUP BY 1, 2`, window),
      ]);
      const days = Array.from({ length: query.days }, (_, i) => new Date(Date.parse(`${from}T00:00:00Z`) + i * DAY_MS).toISOString().slice(0, 10));
      const byGpuTotal: Record<string, number> = {};
      for (const d of deployments) byGpuTotal[d.gpu] = (byGpuTotal[d.gpu] ?? 0) + d.n;
      return {
        from, to,
        days: days.map((date) => ({
          day: date,
          signups: signups.find((s) => s.day === date)?.n ?? 0,
          activeOrganizations: active.find((a) => a.day === date)?.n ?? 0,
          deploymentsByGpu: Object.fromEntries(deployments.filter((d) => d.day === date).map((d) => [d.gpu, d.n])),
        })),
        totals: {
          signups: signups.reduce((a, s) => a + s.n, 0),
          activeOrganizations: activeTotal[0]!.n,
          deploymentsByGpu: byGpuTotal,
        },
      };
    },

    /** Plans and their list prices, monthly recurring revenue, GPU run rate of live deployments, credits outstanding. */
    async revenue(em: EntityManager): Promise<RevenueOverviewBody> {
      const [plans, gpus, credits] = await Promise.all([
        sql<{ plan: Plan; n: number }>(em, `SELECT plan, count(*)::int AS n FROM organization GROUP BY plan`),
        sql<{ gpu: string; deployments: number; replicas: number; gpus: number }>(em, `
          SELECT gpu, count(*)::int AS deployments, sum(current_replicas)::int AS replicas, sum(current_replicas * gpus_per_replica)::int AS gpus FROM deployment
          WHERE deleted_at IS NULL AND status IN (${LIVE_STATUSES.map(() => '?').join(', ')}) GROUP BY gpu ORDER BY gpu`, [...LIVE_STATUSES]),
        sql<{ cents: string }>(em, `SELECT coalesce(sum(credits_cents), 0)::bigint AS cents FROM organization`),
      ]);
      const perPlan = (f: (plan: Plan, n: number) => number) => Object.fromEntries(PLANS.map((plan) => [plan, f(plan, plans.find((p) => p.plan === plan)?.n ?? 0)])) as Record<Plan, number>;
      const mrr = perPlan((plan, n) => n * PLAN_MONTHLY_PRICE_CENTS[plan]);
      // Whole cents per GPU-hour first, so the sums stay exact integers.
      const byGpuType = Object.fromEntries(gpus.map((g) => {
        const hourlyCents = g.gpus * Math.round((findGpuType(g.gpu)?.hourlyPriceUsd ?? 0) * 100);
        return [g.gpu, { deployments: g.deployments, replicas: g.replicas, hourlyCents, projected30DaysCents: hourlyCents * HOURS_30_DAYS }];
      }));
      const hourlyCents = Object.values(byGpuType).reduce((a, g) => a + g.hourlyCents, 0);
      return {
        currency: 'usd',
        organizations: { total: plans.reduce((a, p) => a + p.n, 0), byPlan: perPlan((_, n) => n) },
        planPricesCents: { ...PLAN_MONTHLY_PRICE_CENTS },
        monthlyRecurringRevenueCents: { total: Object.values(mrr).reduce((a, b) => a + b, 0), byPlan: mrr },
        gpuSpend: { liveStatuses: [...LIVE_STATUSES], hourlyCents, projected30DaysCents: hourlyCents * HOURS_30_DAYS, byGpuType },
        creditsOutstandingCents: Number(credits[0]!.cents),
      };
    },

    /**
     * Stops, starts or deletes deployments of any organization through the deployment service, as the
     * organization's own calls would (desired state committed, then sent to the workflow); one result per id.
     */
    async bulk(em: EntityManager, principal: Principal, input: BulkActionInput): Promise<BulkItemResultBody[]> {
      const owners = new Map((await sql<{ id: string; organization_id: string }>(em, `SELECT id, organization_id FROM deployment WHERE id IN (${input.ids.map(() => '?').join(', ')}) AND deleted_at IS NULL`, input.ids))
        .map((r) => [r.id, r.organization_id]));
      const results: BulkItemResultBody[] = [];
      for (const id of input.ids) {
        const organizationId = owners.get(id);
        if (!organizationId) {
          results.push({ id, result: 'not_found' });
          continue;
        }
        // A fresh EntityManager per item: one item's failure leaves nothing half-flushed for the next.
        const itemEm = em.fork();
        const acting: Principal = { ...principal, organizationId };
        try {
          const done = input.action === 'delete'
            ? await deps.deployments.remove(itemEm, acting, id)
            : await deps.deployments.act(itemEm, acting, id, { action: input.action });
          results.push({ id, result: 'ok', status: done.status });
        } catch (error) {
          if (error instanceof DeploymentNotFoundError) {
            results.push({ id, result: 'not_found' });
            continue;
          }
          if (!(error instanceof ApiError)) deps.log.error({ err: error, deploymentId: id }, 'bulk deployment action failed');
          const { code, message } = describeError(error);
          results.push({ id, result: 'error', error: { code, message } });
        }
      }
      return results;
    },
  };
}

interface CustomerRow {
  id: string; name: string; plan: string; credits_cents: number; created_at: Date; members: number;
  deployments: Record<string, number>; requests_30d: number; last_activity_at: Date | null;
}

interface KeyRow {
  id: string; name: string; prefix: string; scope: string; organization_id: string; organization_name: string; user_id: string;
  created_at: Date; rotated_at: Date | null; last_used_at: Date | null;
}

function keyView(k: KeyRow) {
  return {
    id: k.id, name: k.name, prefix: k.prefix, scope: k.scope, organizationId: k.organization_id, organizationName: k.organization_name, userId: k.user_id,
    createdAt: iso(k.created_at), rotatedAt: k.rotated_at ? iso(k.rotated_at) : null, lastUsedAt: k.last_used_at ? iso(k.last_used_at) : null,
  };
}

interface ServiceKeyRow {
  id: string; name: string; prefix: string; created_by_id: string; created_at: Date; rotated_at: Date | null; last_used_at: Date | null;
}

function serviceKeyView(k: ServiceKeyRow) {
  return {
    id: k.id, name: k.name, prefix: k.prefix, createdBy: k.created_by_id,
    createdAt: iso(k.created_at), rotatedAt: k.rotated_at ? iso(k.rotated_at) : null, lastUsedAt: k.last_used_at ? iso(k.last_used_at) : null,
  };
}

function iso(value: Date | string): string {
  return new Date(value).toISOString();
}

export type AdminService = ReturnType<typeof createAdminService>;
