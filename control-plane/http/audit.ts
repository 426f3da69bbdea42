// Every request made with an API key, and every mutation made with any credential, leaves an audit
// record, whatever its outcome. A mutation's record is written before the answer leaves when the process says
// so (the API, while the database answers); a read's is queued and written in the next batch
// (audit/service.ts), and so is every record of the inference gateway, which writes nothing on a request's
// path. A streamed answer whose record needs what only its end tells (an inference's token counts) is
// recorded once the stream ends, also in the next batch.
import type { Middleware } from 'koa';
import type { AuditDetails, AuditEntry, AuditService } from '../audit/service.ts';
import type { AppState } from './context.ts';

const READS = ['GET', 'HEAD', 'OPTIONS'];

export interface AuditTrailOptions {
  /** Whether a mutation's record is written before its answer leaves (else queued). */
  writeBeforeAnswer(): boolean;
}

export function auditTrail(audit: AuditService, options: AuditTrailOptions): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const { principal } = ctx.state;
      const read = READS.includes(ctx.method);
      if (principal && (principal.apiKeyId || !read)) {
        const details = ctx.state.auditDetails;
        const entry: AuditEntry = {
          organizationId: principal.organizationId,
          userId: principal.userId,
          apiKeyId: principal.apiKeyId ?? null,
          action: ctx.state.action ?? `${ctx.method} ${ctx.path}`,
          resourceType: ctx.state.resourceType ?? 'unknown',
          resourceId: ctx.state.resourceId ?? (typeof ctx.params?.id === 'string' ? ctx.params.id : null),
          ipAddress: ctx.ip,
          statusCode: ctx.status,
          createdAt: new Date(),
          details: details instanceof Promise ? null : details ?? null,
        };
        if (details instanceof Promise) {
          const recordEnded = (settled: AuditDetails | null) => audit.recordSoon({ ...entry, details: settled, createdAt: new Date() });
          void details.then(recordEnded, () => recordEnded(null));
        } else if (read || !options.writeBeforeAnswer()) audit.recordSoon(entry);
        else await audit.record(entry).catch((error: unknown) => ctx.state.log.error({ err: error }, 'audit record failed'));
      }
    }
  };
}
