// Idempotency-Key on creating POSTs: the first successful answer is stored per caller and key; the same
// request again gets that answer back, another request under the same key gets 409. Stored answers are
// sealed with AES-256-GCM: some carry secrets shown once (an API key's value, a session's tokens), and
// secrets never rest in the database in the clear.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Middleware } from 'koa';
import { newId } from '../database/ids.ts';
import { sha256 } from '../auth/tokens.ts';
import type { AppState } from './context.ts';
import { BadRequestError, IdempotencyConflictError } from './errors.ts';
import { IdempotencyRecordSchema } from './idempotency.entity.ts';

const KEY = /^[\x21-\x7e]{1,255}$/;
const RETENTION_MS = 24 * 3600 * 1000;

interface Sealed { iv: string; tag: string; data: string }

function seal(key: Buffer, value: unknown): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

function unseal(key: Buffer, sealed: Sealed): unknown {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return JSON.parse(Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8'));
}

export function idempotency(deps: { key: Buffer }): Middleware<AppState> {
  return async (ctx, next) => {
    const key = ctx.get('Idempotency-Key');
    if (!key) return next();
    if (!KEY.test(key)) throw new BadRequestError('Invalid header Idempotency-Key: 1 to 255 visible ASCII characters', { header: 'Idempotency-Key' });
    const { principal, em } = ctx.state;
    const callerKey = principal ? `${principal.organizationId}:${principal.apiKeyId ?? principal.userId}` : `ip:${ctx.ip}`;
    const requestHash = sha256(`${ctx.method} ${ctx.path} ${JSON.stringify(ctx.request.body ?? null)}`);

    // Keys are remembered for a day, like most APIs that take them; after that a key may be used afresh.
    await em.nativeDelete(IdempotencyRecordSchema, { callerKey, key, createdAt: { $lte: new Date(Date.now() - RETENTION_MS) } });
    const stored = await em.findOne(IdempotencyRecordSchema, { callerKey, key });
    if (stored) {
      if (stored.requestHash !== requestHash) {
        throw new IdempotencyConflictError('Idempotency-Key was already used with a different request', { header: 'Idempotency-Key' });
      }
      ctx.status = stored.statusCode;
      ctx.body = unseal(deps.key, stored.responseBody as Sealed);
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }

    await next();
    if (ctx.status >= 200 && ctx.status < 300) {
      // A concurrent twin may have stored its answer first; the first one stays.
      await em.fork().insert(IdempotencyRecordSchema, {
        id: newId('idem'), callerKey, key, requestHash, statusCode: ctx.status, responseBody: seal(deps.key, ctx.body), createdAt: new Date(),
      }).catch((error: unknown) => {
        if (!(error instanceof Error && error.name === 'UniqueConstraintViolationException')) throw error;
      });
    }
  };
}
