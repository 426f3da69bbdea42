// Every request made with an API key, and every mutation made with any credential, leaves an audit
// record, whatever its outcome.
import type { Middleware } from 'koa';
import type { AuditService } from '../audit/service.ts';
import type { AppState } from './context.ts';

export function auditTrail(audit: AuditService): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const { principal } = ctx.state;
      if (principal && (principal.apiKeyId || !['GET', 'HEAD', 'OPTIONS'].includes(ctx.method))) {
        await audit.record({
          organizationId: principal.organizationId,
          userId: principal.userId,
          apiKeyId: principal.apiKeyId ?? null,
          action: ctx.state.action ?? `${ctx.method} ${ctx.path}`,
          resourceType: ctx.state.resourceType ?? 'unknown',
          resourceId: ctx.state.resourceId ?? (typeof ctx.params?.id === 'string' ? ctx.params.id : null),
          ipAddress: ctx.ip,
          statusCode: ctx.status,
        }).catch((error: unknown) => ctx.state.log.error({ err: error }, 'audit record failed'));
      }
    }
  };
}
