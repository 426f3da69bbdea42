// Request id (taken from X-Request-Id when it looks sane, else generated), echoed back; a child logger
// carrying it; one structured log line per request; a forked EntityManager per request.
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { AppState } from './context.ts';
import { surfaceOf } from './surface.ts';

const SANE_ID = /^[\w.-]{1,128}$/;

export interface RequestContextOptions {
  log: Logger;
  orm: MikroORM;
  /**
   * What probes and scrapers ask every few seconds (load balancers, Prometheus): logged at debug when answered well,
   * so an idle API does not write a line every 5 s; a failed probe is logged as any other request.
   */
  isProbe: (path: string) => boolean;
}

export function requestContext(deps: RequestContextOptions): Middleware<AppState> {
  return async (ctx, next) => {
    const given = ctx.get('X-Request-Id');
    const requestId = SANE_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', requestId);
    ctx.state.requestId = requestId;
    // Made when first used: a child logger costs more than most requests' own work, and most never log.
    let log: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', { get: () => (log ??= deps.log.child({ requestId })), enumerable: true });
    ctx.state.surface = surfaceOf(ctx.path);
    ctx.state.em = deps.orm.em.fork();
    const started = performance.now();
    try {
      await next();
    } finally {
      const level = deps.isProbe(ctx.path) && ctx.status < 400 ? 'debug' : 'info';
      deps.log[level]({
        requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        durationMs: Math.round(performance.now() - started),
        organizationId: ctx.state.principal?.organizationId,
      }, 'request');
    }
  };
}
