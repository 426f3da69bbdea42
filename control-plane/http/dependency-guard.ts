// While the database is unavailable (paused, unreachable, refusing), a request that needs it is answered 503
// with Retry-After at once, and one already waiting on it is answered 503 as soon as the loss is seen, rather
// than hanging until the database returns: a load balancer and a client get a clear, retryable answer within
// seconds. The probes that say so run in the background (health/dependencies.ts). What needs no database
// (liveness and readiness, the internal metrics) passes regardless.
import type { Middleware } from 'koa';
import type { DependencyMonitor } from '../health/dependencies.ts';
import type { AppState } from './context.ts';

export function dependencyGuard(monitor: Pick<DependencyMonitor, 'whileAvailable'>, needsNoDatabase: (path: string) => boolean): Middleware<AppState> {
  return (ctx, next) => (needsNoDatabase(ctx.path) ? next() : monitor.whileAvailable(next));
}
