import { CircuitView } from '../recovery/schemas.ts';
import { ServiceKeyView } from '../service-keys/schemas.ts';
import { z } from 'zod';
import { DEPLOYMENT_STATUSES } from '../../workflows/contract/deployment.ts';
import { PLANS } from '../../catalog/plans.ts';

const limit = z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Page size, 1 to 100.' });
const cursor = z.string().max(2048).optional().meta({ description: 'pagination.nextCursor of the previous page.' });
const timestamp = z.iso.datetime();

export const ListCustomersQuery = z.object({
  limit,
  cursor,
  plan: z.enum(PLANS).optional().meta({ description: 'Only organizations on this plan.' }),
});
export type ListCustomersInput = z.output<typeof ListCustomersQuery>;

export const Customer = z.object({
  id: z.string(),
  name: z.string(),
  plan: z.enum(PLANS),
  createdAt: timestamp,
  members: z.number().int(),
  deployments: z.object({
    total: z.number().int(),
    byStatus: z.record(z.string(), z.number().int()).meta({ description: 'Live (not deleted) deployments per status.' }),
  }),
  usage: z.object({
    requestsLast30Days: z.number().int().meta({ description: 'Audited requests (every API-key call and every change) in the last 30 days.' }),
    lastActivityAt: timestamp.nullable(),
    creditsCents: z.number().int().meta({ description: 'Prepaid balance in US cents.' }),
  }),
}).meta({ id: 'AdminCustomer' });

const KeyView = z.object({
  id: z.string(), name: z.string(), prefix: z.string(), scope: z.string(), organizationId: z.string(), organizationName: z.string(), userId: z.string(),
  createdAt: timestamp, rotatedAt: timestamp.nullable(), lastUsedAt: timestamp.nullable(),
});

export const SecurityOverview = z.object({
  failedSignins: z.object({
    windowMinutes: z.number().int(),
    lockAfter: z.number().int().meta({ description: 'Failures in the window after which sign-in is refused until it ends.' }),
    accounts: z.array(z.object({ email: z.string(), failures: z.number().int(), locked: z.boolean(), windowEndsAt: timestamp.nullable() })),
  }),
  lockedAccounts: z.array(z.object({ email: z.string(), lockedUntil: timestamp.nullable() })),
  keysNotRotated: z.object({ olderThanDays: z.number().int(), total: z.number().int(), items: z.array(KeyView) }),
  keysNeverUsed: z.object({ total: z.number().int(), items: z.array(KeyView) }),
  serviceKeys: z.object({ total: z.number().int(), items: z.array(ServiceKeyView) })
    .meta({ description: 'Service role keys not revoked, oldest first, with their last use (null: never used).' }),
}).meta({ id: 'AdminSecurity' });

export const OperationsOverview = z.object({
  deployments: z.object({ total: z.number().int(), byStatus: z.record(z.string(), z.number().int()) }),
  failedWorkflows: z.array(z.object({
    deploymentId: z.string(),
    name: z.string(),
    organizationId: z.string(),
    organizationName: z.string(),
    failureReason: z.string().nullable(),
    failedAt: timestamp,
    workflowUrl: z.string().nullable().meta({ description: 'The deployment\'s workflow in the Temporal Web UI (KILN_TEMPORAL_UI_URL); null when it is not configured.' }),
    workflow: z.object({
      status: z.string(),
      pendingActivities: z.array(z.object({ activity: z.string(), attempt: z.number().int(), lastFailure: z.string().nullable() })),
    }).nullable().meta({ description: 'What Temporal reports of the deployment\'s workflow; null when it cannot tell.' }),
  })),
  openCircuits: z.array(CircuitView).meta({ description: 'Provisioning circuits (per provider and GPU type) that are open or half-open: see GET /v1/recovery/circuits.' }),
}).meta({ id: 'AdminOperations' });

const day = z.iso.date().meta({ description: 'YYYY-MM-DD (UTC).' });
const DAY_MS = 86_400_000;
export const MAX_ANALYTICS_DAYS = 366;
export const AnalyticsQuery = z.object({
  from: day.optional().meta({ description: 'First day (default: 29 days before `to`).' }),
  to: day.optional().meta({ description: 'Last day, included (default: today, UTC).' }),
}).transform((q, ctx) => {
  const to = q.to ?? new Date().toISOString().slice(0, 10);
  const from = q.from ?? new Date(Date.parse(to) - 29 * DAY_MS).toISOString().slice(0, 10);
  const days = (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;
  if (days < 1 || days > MAX_ANALYTICS_DAYS) {
    ctx.addIssue({ code: 'custom', path: ['to'], message: days < 1 ? 'must not be before from' : `the window may span at most ${MAX_ANALYTICS_DAYS} days` });
    return z.NEVER;
  }
  return { from, to, days };
});
export type AnalyticsInput = z.output<typeof AnalyticsQuery>;

export const AnalyticsOverview = z.object({
  from: day,
  to: day,
  days: z.array(z.object({
    day,
    signups: z.number().int(),
    activeOrganizations: z.number().int().meta({ description: 'Organizations with at least one audited request that day.' }),
    deploymentsByGpu: z.record(z.string(), z.number().int()).meta({ description: 'Deployments created that day, per GPU type.' }),
  })),
  totals: z.object({ signups: z.number().int(), activeOrganizations: z.number().int(), deploymentsByGpu: z.record(z.string(), z.number().int()) }),
}).meta({ id: 'AdminAnalytics' });

export const ListIssuesQuery = z.object({ limit, cursor });

export const ErrorIssue = z.object({
  id: z.string(),
  fingerprint: z.string().meta({ description: 'Hash of the error name and its top stack frames.' }),
  name: z.string(),
  message: z.string().meta({ description: 'Message of the latest occurrence.' }),
  stack: z.string().meta({ description: 'Top stack frames of the latest occurrence.' }),
  count: z.number().int(),
  firstSeenAt: timestamp,
  lastSeenAt: timestamp,
  lastRequest: z.string().meta({ description: 'Method, path and request id of the latest occurrence.' }),
}).meta({ id: 'ErrorIssue' });

export const BULK_ACTIONS = ['stop', 'start', 'delete'] as const;
export const BulkActionRequest = z.strictObject({
  action: z.enum(BULK_ACTIONS),
  ids: z.array(z.string().min(1).max(64)).min(1).max(100)
    .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an id')
    .meta({ description: '1 to 100 deployment ids, of any organization.' }),
}).meta({ id: 'BulkDeploymentActionRequest' });
export type BulkActionInput = z.output<typeof BulkActionRequest>;

export const BulkItemResult = z.object({
  id: z.string(),
  result: z.enum(['ok', 'not_found', 'error']),
  status: z.enum(DEPLOYMENT_STATUSES).optional().meta({ description: 'The deployment\'s status after the request (ok only).' }),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
}).meta({ id: 'BulkDeploymentActionResult' });
export type BulkItemResultBody = z.infer<typeof BulkItemResult>;

export const BulkActionResponse = z.object({
  action: z.enum(BULK_ACTIONS),
  results: z.array(BulkItemResult),
  summary: z.object({ ok: z.number().int(), notFound: z.number().int(), error: z.number().int() }),
}).meta({ id: 'BulkDeploymentActionResponse' });

const cents = z.number().int();
const byPlan = z.record(z.enum(PLANS), cents);
export const RevenueOverview = z.object({
  currency: z.literal('usd'),
  organizations: z.object({
    total: z.number().int(),
    byPlan: z.record(z.enum(PLANS), z.number().int()).meta({ description: 'Organizations on each plan (every plan listed, 0 when none).' }),
  }),
  planPricesCents: byPlan.meta({ description: 'Kiln\'s monthly list price of each plan, US cents (catalog/plans.ts).' }),
  monthlyRecurringRevenueCents: z.object({
    total: cents.meta({ description: 'Sum of byPlan.' }),
    byPlan: byPlan.meta({ description: 'Organizations on the plan times the plan\'s monthly list price.' }),
  }),
  gpuSpend: z.object({
    liveStatuses: z.array(z.enum(DEPLOYMENT_STATUSES)).meta({ description: 'Statuses of the deployments counted (not deleted ones holding GPUs).' }),
    hourlyCents: cents.meta({ description: 'Run rate: sum over live deployments of their GPUs (replicas running now, as their workflows record them, x GPUs per replica) times the GPU type\'s hourly price (catalog/gpu-types.ts) in cents.' }),
    projected30DaysCents: cents.meta({ description: 'hourlyCents times 720 (30 days of 24 hours).' }),
    byGpuType: z.record(z.string(), z.object({
      deployments: z.number().int(),
      replicas: z.number().int(),
      hourlyCents: cents,
      projected30DaysCents: cents,
    })).meta({ description: 'The same figures per GPU type that has live deployments.' }),
  }),
  creditsOutstandingCents: cents.meta({ description: 'Sum of every organization\'s prepaid balance (credits not yet spent).' }),
}).meta({ id: 'AdminRevenue' });
export type RevenueOverviewBody = z.infer<typeof RevenueOverview>;
