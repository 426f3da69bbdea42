// While the database is unavailable (paused, unreachable, refusing), a request that needs it is answered 503
// with Retry-After at once, and one already waiting on it is answered 503 as soon as the loss is seen, rather
// than hanging until the database returns: a load balancer and a client get a clear, retryable answer within
// seconds. The probes that say so run in the background (health/dependencies.ts). What needs no database
// (liveness and readiness, the internal metrics) passes regardless.
import type { Middleware } from 'koa';
import { ServiceUnavailableError } from '../core/errors.ts';
import type { DependencyMonitor } from '../health/dependencies.ts';
import type { AppState } from './context.ts';

const RETRY_AFTER_SECONDS = '5';

const unavailable = () => new ServiceUnavailableError('The database is unavailable: retry shortly (a creating request with the same Idempotency-Key is answered once)', { dependency: 'database' }, { 'Retry-After': RETRY_AFTER_SECONDS });

export function dependencyGuard(monitor: Pick<DependencyMonitor, 'databaseAvailable' | 'onDatabaseLost'>, needsNoDatabase: (path: string) => boolean): Middleware<AppState> {
  return async (ctx, next) => {
    if (needsNoDatabase(ctx.path)) return next();
    if (!monitor.databaseAvailable()) throw unavailable();
    let unsubscribe = () => {};
    const lost = new Promise<'lost'>((resolve) => { unsubscribe = monitor.onDatabaseLost(() => resolve('lost')); });
    const handled = next();
    try {
      if (await Promise.race([handled.then(() => 'done' as const), lost]) === 'lost') {
        // The request goes on waiting for the database in the background; whatever it ends with is not this answer.
        handled.catch(() => undefined);
        throw unavailable();
      }
    } finally {
      unsubscribe();
    }
  };
}
