// Idempotency-Key on creating POSTs: the first successful answer is stored per caller and key; the same
// request again gets that answer back, another request under the same key gets 409.
import type { Middleware } from 'koa';
import { newId } from '../database/ids.ts';
import { sha256 } from '../auth/tokens.ts';
import type { AppState } from './context.ts';
import { BadRequestError, IdempotencyConflictError } from './errors.ts';
import { IdempotencyRecordSchema } from './idempotency.entity.ts';

const KEY = /^[\x21-\x7e]{1,255}$/;

export function idempotency(): Middleware<AppState> {
  return async (ctx, next) => {
    const key = ctx.get('Idempotency-Key');
    if (!key) return next();
    if (!KEY.test(key)) throw new BadRequestError('Invalid header Idempotency-Key: 1 to 255 visible ASCII characters', { header: 'Idempotency-Key' });
    const { principal, em } = ctx.state;
    const callerKey = principal ? `${principal.organizationId}:${principal.apiKeyId ?? principal.userId}` : `ip:${ctx.ip}`;
    const requestHash = sha256(`${ctx.method} ${ctx.path} ${JSON.stringify(ctx.request.body ?? null)}`);

    const stored = await em.findOne(IdempotencyRecordSchema, { callerKey, key });
    if (stored) {
      if (stored.requestHash !== requestHash) {
        throw new IdempotencyConflictError('Idempotency-Key was already used with a different request', { header: 'Idempotency-Key' });
      }
      ctx.status = stored.statusCode;
      ctx.body = stored.responseBody;
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }

    await next();
    if (ctx.status >= 200 && ctx.status < 300) {
      // A concurrent twin may have stored its answer first; the first one stays.
      await em.fork().insert(IdempotencyRecordSchema, {
        id: newId('idem'), callerKey, key, requestHash, statusCode: ctx.status, responseBody: ctx.body, createdAt: new Date(),
      }).catch((error: unknown) => {
        if (!(error instanceof Error && error.name === 'UniqueConstraintViolationException')) throw error;
      });
    }
  };
}
