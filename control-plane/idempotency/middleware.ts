// Idempotency-Key on creating POSTs: the first successful answer is stored per caller and key; the same
// request again (concurrent twins included) gets that answer back, another request under the same key
// gets 409; a request whose process died lets its key go within seconds (it no longer renews its reservation).
// A route that creates a resource names it (IdempotentCreation): the transaction that creates it also records
// its id under the key, so when the process dies between that commit and storing the answer, a retry answers
// with the resource as it is now rather than creating it twice.
// Stored answers are sealed with AES-256-GCM: some carry secrets shown once (an API key's value, a session's
// tokens), and secrets never rest in the database in the clear.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChangeSetType, type EventSubscriber, type MikroORM } from '@mikro-orm/core';
import type { Middleware } from 'koa';
import { newId } from '../../lib/ids.ts';
import { sha256 } from '../auth/tokens.ts';
import type { AppState } from '../http/context.ts';
import type { Route } from '../http/routes.ts';
import { BadRequestError, IdempotencyConflictError } from '../core/errors.ts';
import { IdempotencyRecordSchema } from './idempotency-record.entity.ts';

/** What an Idempotency-Key may be, as the OpenAPI document describes the header too. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
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

/** statusCode of a reservation: the first request under the key has not answered yet. */
const PENDING = 0;
/** How often a request renews its reservation (its created_at) while it runs: the sign its process is alive. */
const RESERVATION_RENEW_MS = 2_000;
/**
 * A reservation not renewed this long belongs to a request whose process died (killed, crashed): the key is free
 * again. Shorter than TWIN_WAIT_MS, so a retry arriving after the crash takes the key over within its wait.
 */
const ABANDONED_MS = 8_000;
/** How long a twin waits for the first request's answer before it is told to retry. */
const TWIN_WAIT_MS = 10_000;
const TWIN_POLL_MS = 100;

/** A creating request in flight: which reservation it holds and which entity it creates. */
interface Creation { reservation: string; entity: string; created?: string; recorded?: boolean }
const creations = new AsyncLocalStorage<Creation>();

/**
 * Records a creating request's resource in the transaction that creates it: the flush names the new row, and
 * the same transaction writes its id under the request's key before it commits.
 */
const recordCreation: EventSubscriber = {
  onFlush({ uow }) {
    const creation = creations.getStore();
    if (!creation || creation.created) return;
    const made = uow.getChangeSets().find((change) => change.type === ChangeSetType.CREATE && change.meta.className === creation.entity);
    if (made) creation.created = made.getSerializedPrimaryKey() ?? undefined;
  },
  async beforeTransactionCommit({ em, transaction }) {
    const creation = creations.getStore();
    if (!creation?.created || creation.recorded) return;
    await em.getConnection('write').execute('update "idempotency_record" set "resource_id" = ? where "id" = ?', [creation.created, creation.reservation], 'run', transaction);
    creation.recorded = true;
  },
};

/** The middleware a route marked idempotent gets (http/routes.ts mountRoutes). */
export function idempotency(deps: { key: Buffer; orm: MikroORM }): (route: Route) => Middleware<AppState> {
  deps.orm.em.getEventManager().registerSubscriber(recordCreation);
  return (route) => idempotentRequests(deps.key, typeof route.idempotent === 'object' ? route.idempotent.creates : undefined);
}

function idempotentRequests(sealKey: Buffer, creates: string | undefined): Middleware<AppState> {
  return async (ctx, next) => {
    // ctx.get answers '' both when the header is absent and when it is sent empty: only an absent one is no key.
    if (ctx.headers['idempotency-key'] === undefined) return next();
    const key = ctx.get('Idempotency-Key');
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw new BadRequestError('Invalid header Idempotency-Key: 1 to 255 visible ASCII characters', { header: 'Idempotency-Key' });
    const { principal, em } = ctx.state;
    // An address is hashed: behind a trusted proxy it comes from X-Forwarded-For, of any length.
    const callerKey = principal ? `${principal.organizationId}:${principal.apiKeyId ?? principal.userId}` : `ip:${sha256(ctx.ip)}`;
    const requestHash = sha256(`${ctx.method} ${ctx.path} ${JSON.stringify(ctx.request.body ?? null)}`);
    const reused = () => new IdempotencyConflictError('Idempotency-Key was already used with a different request', { header: 'Idempotency-Key' });

    // The key is reserved before the request runs: of concurrent twins exactly one runs it, the others
    // wait for its answer and replay it.
    let reservation: string | undefined;
    for (const deadline = Date.now() + TWIN_WAIT_MS; ; await sleep(TWIN_POLL_MS)) {
      // Keys are remembered for a day, like most APIs that take them; after that a key may be used afresh. A
      // reservation its process stopped renewing is let go: a twin waiting on it then runs the request itself.
      const now = Date.now();
      await em.fork().nativeDelete(IdempotencyRecordSchema, {
        callerKey, key,
        $or: [{ createdAt: { $lte: new Date(now - RETENTION_MS) } }, { statusCode: PENDING, resourceId: null, createdAt: { $lte: new Date(now - ABANDONED_MS) } }],
      });
      const id = newId('idem');
      const reserved = await em.fork().insert(IdempotencyRecordSchema, {
        id, callerKey, key, requestHash, statusCode: PENDING, responseBody: {}, createdAt: new Date(),
      }).then(() => true, (error: unknown) => {
        if (error instanceof Error && error.name === 'UniqueConstraintViolationException') return false;
        throw error;
      });
      if (reserved) {
        reservation = id;
        break;
      }
      const stored = await em.fork().findOne(IdempotencyRecordSchema, { callerKey, key });
      if (!stored) continue; // the first request failed and let the key go: this one may run
      if (stored.requestHash !== requestHash) throw reused();
      if (stored.statusCode !== PENDING) {
        ctx.status = stored.statusCode;
        ctx.body = unseal(sealKey, stored.responseBody as Sealed);
        ctx.set('Idempotent-Replayed', 'true');
        return;
      }
      // Its creation committed, then its process died before answering: this request takes the reservation
      // over (one twin wins the update) and answers with the resource it made.
      if (stored.resourceId && stored.createdAt.getTime() <= now - ABANDONED_MS) {
        const takenOver = await em.fork().nativeUpdate(IdempotencyRecordSchema, { id: stored.id, statusCode: PENDING, createdAt: stored.createdAt }, { createdAt: new Date() });
        if (takenOver === 1) {
          reservation = stored.id;
          ctx.state.idempotentReplayOf = stored.resourceId;
          ctx.set('Idempotent-Replayed', 'true');
          break;
        }
        continue;
      }
      if (Date.now() > deadline) {
        throw new IdempotencyConflictError('A request with this Idempotency-Key is still in progress: retry once it has answered', { header: 'Idempotency-Key' });
      }
    }

    let kept = false;
    const renewal = setInterval(() => {
      em.fork().nativeUpdate(IdempotencyRecordSchema, { id: reservation, statusCode: PENDING }, { createdAt: new Date() })
        .catch((error: unknown) => ctx.state.log.warn({ err: error }, 'idempotency reservation not renewed'));
    }, RESERVATION_RENEW_MS);
    const creation: Creation | undefined = creates && !ctx.state.idempotentReplayOf ? { reservation: reservation!, entity: creates } : undefined;
    try {
      await (creation ? creations.run(creation, next) : next());
      if (ctx.status >= 200 && ctx.status < 300) {
        await em.fork().nativeUpdate(IdempotencyRecordSchema, { id: reservation }, { statusCode: ctx.status, responseBody: seal(sealKey, ctx.body) });
        kept = true;
      }
    } finally {
      clearInterval(renewal);
      // Only successes are kept: a failed request may be retried under the same key. A reservation that names
      // a created resource stays: the creation happened, and a later retry answers with it.
      // (Should the database refuse even that, the reservation is abandoned after ABANDONED_MS.)
      if (!kept && !ctx.state.idempotentReplayOf && !creation?.recorded) await em.fork().nativeDelete(IdempotencyRecordSchema, { id: reservation }).catch((error: unknown) => ctx.state.log.error({ err: error }, 'idempotency reservation not released'));
    }
  };
}
