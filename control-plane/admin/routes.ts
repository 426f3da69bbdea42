// /v1/admin/...: the spec's Administration rows, for platform administrators (KILN_ADMIN_EMAILS) only;
// the permission table gives every route admin:read or admin:write. Reports also answer on
// GET /v1/admin/reports, /{id} and /{id}/download (not in the spec: the list, and where the generated CSV is fetched).
import { z } from 'zod';
import type { AuditQueryService } from '../audit/query.ts';
import { ListPlatformAuditQuery, PlatformAuditRecordView } from '../audit/schemas.ts';
import { defineRoute, pageReply, type Route } from '../http/routes.ts';
import type { ErrorTracker } from '../error-tracker/service.ts';
import type { FeatureFlagService } from '../feature-flags/service.ts';
import {
  CreateFeatureFlagRequest, DeletedFeatureFlag, FeatureFlagIdParams, FeatureFlagView, UpdateFeatureFlagRequest,
} from '../feature-flags/schemas.ts';
import type { NotificationService } from '../notifications/service.ts';
import {
  CreateNotificationRequest, DeletedNotification, ListNotificationsQuery, NotificationIdParams, NotificationView, UpdateNotificationRequest,
} from '../notifications/schemas.ts';
import type { ReportService } from '../reports/service.ts';
import { GenerateReportRequest, ListReportsQuery, ReportIdParams, ReportView } from '../reports/schemas.ts';
import type { AdminService } from './service.ts';
import {
  AnalyticsOverview, AnalyticsQuery, BulkActionRequest, BulkActionResponse, Customer, ErrorIssue,
  ListCustomersQuery, ListIssuesQuery, OperationsOverview, RevenueOverview, SecurityOverview,
} from './schemas.ts';

const common = { tag: 'Administration' } as const;

export interface AdminRouteDeps {
  admin: AdminService;
  audit: Pick<AuditQueryService, 'listPlatform'>;
  featureFlags: FeatureFlagService;
  notifications: NotificationService;
  errors: Pick<ErrorTracker, 'issues'>;
  reports: ReportService;
}

export function adminRoutes({ admin, audit, featureFlags, notifications, errors, reports }: AdminRouteDeps): Route[] {
  const flag = { ...common, resourceType: 'feature_flag' } as const;
  const report = { ...common, resourceType: 'report' } as const;
  const notification = { ...common, resourceType: 'notification' } as const;
  return [
    defineRoute({
      ...flag, permission: 'admin:read', method: 'GET', path: '/v1/admin/feature-flags', operationId: 'listFeatureFlags', summary: 'List feature flags',
      response: z.array(FeatureFlagView),
      handle: async ({ state }) => ({ data: await featureFlags.list(state.em) }),
    }),
    defineRoute({
      ...flag, permission: 'admin:write', method: 'POST', path: '/v1/admin/feature-flags', operationId: 'createFeatureFlag',
      summary: 'Create a feature flag (default, per-organization overrides, percentage rollout)',
      body: CreateFeatureFlagRequest, response: FeatureFlagView, successStatus: 201, idempotent: true, errors: [409, 422],
      handle: async ({ body, state }) => ({ data: await featureFlags.create(state.em, body) }),
    }),
    defineRoute({
      ...flag, permission: 'admin:write', method: 'PATCH', path: '/v1/admin/feature-flags/{id}', operationId: 'updateFeatureFlag', summary: 'Change a feature flag',
      params: FeatureFlagIdParams, body: UpdateFeatureFlagRequest, response: FeatureFlagView, errors: [404, 422],
      handle: async ({ params, body, state }) => ({ data: await featureFlags.update(state.em, params.id, body) }),
    }),
    defineRoute({
      ...flag, permission: 'admin:write', method: 'DELETE', path: '/v1/admin/feature-flags/{id}', operationId: 'deleteFeatureFlag', summary: 'Delete a feature flag',
      params: FeatureFlagIdParams, response: DeletedFeatureFlag, errors: [404],
      handle: async ({ params, state }) => ({ data: await featureFlags.remove(state.em, params.id) }),
    }),
    defineRoute({
      ...notification, permission: 'admin:read', method: 'GET', path: '/v1/admin/notifications', operationId: 'listAdminNotifications',
      summary: 'Platform notifications, newest first (cursor pagination)',
      query: ListNotificationsQuery, response: z.array(NotificationView), list: true,
      handle: async ({ query, state }) => pageReply(await notifications.list(state.em, query)),
    }),
    defineRoute({
      ...notification, permission: 'admin:write', method: 'POST', path: '/v1/admin/notifications', operationId: 'createNotification',
      summary: 'Publish a notification to every organization or to some, optionally within a time window',
      body: CreateNotificationRequest, response: NotificationView, successStatus: 201, idempotent: true, errors: [422],
      handle: async ({ body, state }) => ({ data: await notifications.create(state.em, body) }),
    }),
    defineRoute({
      ...notification, permission: 'admin:write', method: 'PATCH', path: '/v1/admin/notifications/{id}', operationId: 'updateNotification', summary: 'Change a notification',
      params: NotificationIdParams, body: UpdateNotificationRequest, response: NotificationView, errors: [404, 422],
      handle: async ({ params, body, state }) => ({ data: await notifications.update(state.em, params.id, body) }),
    }),
    defineRoute({
      ...notification, permission: 'admin:write', method: 'DELETE', path: '/v1/admin/notifications/{id}', operationId: 'deleteNotification', summary: 'Delete a notification',
      params: NotificationIdParams, response: DeletedNotification, errors: [404],
      handle: async ({ params, state }) => ({ data: await notifications.remove(state.em, params.id) }),
    }),
    defineRoute({
      ...common, resourceType: 'revenue', permission: 'admin:read', method: 'GET', path: '/v1/admin/revenue', operationId: 'getRevenueOverview',
      summary: 'Organizations by plan, monthly recurring revenue at list prices, GPU run rate of live deployments, credits outstanding',
      response: RevenueOverview,
      handle: async ({ state }) => ({ data: await admin.revenue(state.em) }),
    }),
    defineRoute({
      ...common, resourceType: 'organization', permission: 'admin:read', method: 'GET', path: '/v1/admin/customers', operationId: 'listCustomers',
      summary: 'Organizations with plan, members, deployments by status and usage (cursor pagination)',
      query: ListCustomersQuery, response: z.array(Customer), list: true,
      handle: async ({ query, state }) => pageReply(await admin.customers(state.em, query)),
    }),
    defineRoute({
      ...common, resourceType: 'audit_log', permission: 'admin:read', method: 'GET', path: '/v1/admin/audit', operationId: 'listPlatformAudit',
      summary: 'The audit trail of every organization (or of one), with the filters of the organization audit (cursor pagination)',
      query: ListPlatformAuditQuery, response: z.array(PlatformAuditRecordView), list: true,
      handle: async ({ query, state }) => pageReply(await audit.listPlatform(state.em, query)),
    }),
    defineRoute({
      ...common, resourceType: 'security', permission: 'admin:read', method: 'GET', path: '/v1/admin/security', operationId: 'getSecurityOverview',
      summary: 'Failed sign-ins, locked accounts, API keys not rotated for 90 days, keys never used, service role keys with their last use',
      response: SecurityOverview,
      handle: async ({ state }) => ({ data: await admin.security(state.em) }),
    }),
    defineRoute({
      ...common, resourceType: 'operations', permission: 'admin:read', method: 'GET', path: '/v1/admin/operations', operationId: 'getOperationsOverview',
      summary: 'Deployments by status, failed deployment workflows with their reason, open circuits',
      response: OperationsOverview,
      handle: async ({ state }) => ({ data: await admin.operations(state.em) }),
    }),
    defineRoute({
      ...common, resourceType: 'analytics', permission: 'admin:read', method: 'GET', path: '/v1/admin/analytics', operationId: 'getPlatformAnalytics',
      summary: 'Sign-ups, active organizations and new deployments by GPU type, in daily buckets (UTC)',
      query: AnalyticsQuery, response: AnalyticsOverview,
      handle: async ({ query, state }) => ({ data: await admin.analytics(state.em, query) }),
    }),
    defineRoute({
      ...common, resourceType: 'error_issue', permission: 'admin:read', method: 'GET', path: '/v1/admin/errortracker/issues', operationId: 'listErrorIssues',
      summary: 'Unhandled errors grouped by fingerprint, most recently seen first (cursor pagination)',
      query: ListIssuesQuery, response: z.array(ErrorIssue), list: true,
      handle: async ({ query, state }) => pageReply(await errors.issues(state.em, query)),
    }),
    defineRoute({
      ...report, permission: 'admin:write', method: 'POST', path: '/v1/admin/reports/generate', operationId: 'generateReport',
      summary: 'Start writing a CSV report; answers at once with its id and where to fetch it (pending; while Temporal is away its workflow starts once Temporal answers)',
      body: GenerateReportRequest, response: ReportView, successStatus: 201, idempotent: true, errors: [422],
      handle: async ({ body, state }) => ({ data: await reports.generate(state.em, state.principal!, body) }),
    }),
    defineRoute({
      ...report, permission: 'admin:read', method: 'GET', path: '/v1/admin/reports', operationId: 'listReports',
      summary: 'Every report asked for, by any administrator or key, newest first (cursor pagination)',
      query: ListReportsQuery, response: z.array(ReportView), list: true,
      handle: async ({ query, state }) => pageReply(await reports.list(state.em, query)),
    }),
    defineRoute({
      ...report, permission: 'admin:read', method: 'GET', path: '/v1/admin/reports/{id}', operationId: 'getReport', summary: 'A report\'s status (pending, running, ready, failed)',
      params: ReportIdParams, response: ReportView, errors: [404],
      handle: async ({ params, state }) => ({ data: await reports.get(state.em, params.id) }),
    }),
    defineRoute({
      ...report, permission: 'admin:read', method: 'GET', path: '/v1/admin/reports/{id}/download', operationId: 'downloadReport', summary: 'A ready report\'s CSV file',
      params: ReportIdParams, streams: { 'text/csv': z.string().meta({ description: 'CSV with a header row.' }) }, errors: [404, 409],
      handle: async ({ params, state }) => reports.download(state.em, params.id),
    }),
    defineRoute({
      ...common, resourceType: 'deployment', permission: 'admin:write', method: 'POST', path: '/v1/admin/deployments/bulk', operationId: 'bulkDeploymentAction',
      summary: 'Stop, start or delete up to 100 deployments of any organization through their workflows, with a result per deployment',
      body: BulkActionRequest, response: BulkActionResponse, errors: [422],
      async handle({ body, state }) {
        const results = await admin.bulk(state.em, state.principal!, body);
        const count = (result: string) => results.filter((r) => r.result === result).length;
        return { data: { action: body.action, results, summary: { ok: count('ok'), notFound: count('not_found'), error: count('error') } } };
      },
    }),
  ];
}
