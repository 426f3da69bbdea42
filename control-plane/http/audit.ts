// Every request made with an API key, and every mutation made with any credential, leaves an audit
// record, whatever its outcome. A mutation's record is written before the answer leaves; a read's is
// queued and written in the next batch (audit/service.ts).
import type { Middleware } from 'koa';
import type { AuditService } from '../audit/service.ts';
import type { AppState } from './context.ts';

const READS = ['GET', 'HEAD', 'OPTIONS'];

export function auditTrail(audit: AuditService): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const { principal } = ctx.state;
      const read = READS.includes(ctx.method);
      if (principal && (principal.apiKeyId || !read)) {
        const entry = {
          organizationId: principal.organizationId,
          userId: principal.userId,
          apiKeyId: principal.apiKeyId ?? null,
          action: ctx.state.action ?? `${ctx.method} ${ctx.path}`,
          resourceType: ctx.state.resourceType ?? 'unknown',
          resourceId: ctx.state.resourceId ?? (typeof ctx.params?.id === 'string' ? ctx.params.id : null),
          ipAddress: ctx.ip,
          statusCode: ctx.status,
          createdAt: new Date(),
        };
        if (read) audit.recordSoon(entry);
        else await audit.record(entry).catch((error: unknown) => ctx.state.log.error({ err: error }, 'audit record failed'));
      }
    }
  };
}
