// The audit trail: every request recorded (audit/service.ts, written by the http/audit.ts middleware), read
// back and exported by enterprise customers, and counted for their analytics.
import { defineModule } from '../module.ts';
import { createAnalyticsService } from './analytics.ts';
import { createAuditQueryService, type AuditQueryService } from './query.ts';
import { auditRoutes } from './routes.ts';
import { createAuditService, type AuditService } from './service.ts';

declare module '../module.ts' {
  interface Services { audit: AuditService; auditQuery: AuditQueryService }
}

export const auditModule = defineModule({
  name: 'audit',
  services: ({ pool, log, cursors }) => ({ audit: createAuditService({ pool, log }), auditQuery: createAuditQueryService({ cursors }) }),
  routes: ({ services, routes }) => auditRoutes(
    services.auditQuery,
    createAnalyticsService({ mutatingActions: () => routes().filter((r) => r.method !== 'GET').map((r) => r.operationId) }),
  ),
  // Writes the records still queued.
  close: ({ audit }) => audit.close(),
});
