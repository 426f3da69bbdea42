// The enterprise audit trail and usage analytics: GET /v1/enterprise/audit (filtered, cursor pages),
// /v1/enterprise/audit/export (the same filters, streamed as CSV or JSON Lines) and /v1/enterprise/analytics.
import { z } from 'zod';
import { defineRoute, pageReply, type Route } from '../http/routes.ts';
import type { AnalyticsService } from './analytics.ts';
import type { AuditQueryService } from './query.ts';
import { AnalyticsQuery, AnalyticsView, AuditExportStreams, AuditRecordView, ExportAuditQuery, ListAuditQuery } from './schemas.ts';

const common = { tag: 'Enterprise', resourceType: 'audit_log' } as const;

export function auditRoutes(audit: AuditQueryService, analytics: AnalyticsService): Route[] {
  return [
    defineRoute({
      ...common, permission: 'audit:read', method: 'GET', path: '/v1/enterprise/audit', operationId: 'listAuditRecords',
      summary: 'The organization\'s audit records, newest first (filters by actor, action, resource and time; cursor pagination)',
      query: ListAuditQuery, response: z.array(AuditRecordView), list: true,
      handle: async ({ query, state }) => pageReply(await audit.list(state.em, state.principal!, query)),
    }),
    defineRoute({
      ...common, permission: 'audit:read', method: 'GET', path: '/v1/enterprise/audit/export', operationId: 'exportAuditRecords',
      summary: 'Every audit record matching the filters, streamed as CSV or JSON Lines',
      query: ExportAuditQuery, streams: AuditExportStreams,
      handle: async ({ query, state }) => audit.export(state.em, state.principal!, query),
    }),
    defineRoute({
      tag: 'Enterprise', resourceType: 'analytics', permission: 'analytics:read', method: 'GET', path: '/v1/enterprise/analytics', operationId: 'enterpriseAnalytics',
      summary: 'Usage over a period: requests and mutations by member, API key and deployment; deployments by GPU type',
      query: AnalyticsQuery, response: AnalyticsView,
      handle: async ({ query, state }) => ({ data: await analytics.usage(state.em, state.principal!, query) }),
    }),
  ];
}
