// Counts every answer by method, route template and status, and times it (ApiMetrics, observability/). Placed
// before the error handler so it sees the status the client gets, failures included. A request that never
// reached a route (rate limited, 404, 405) is named by `routeOf` as the router would have matched it, or
// `unmatched`: labels stay bounded by the routes declared, whatever URLs clients send.
import type { Middleware } from 'koa';
import type { ApiMetrics } from '../observability/metrics.ts';
import type { AppState } from './context.ts';

export function measureRequests(metrics: Pick<ApiMetrics, 'request'>, routeOf: (method: string, path: string) => string | undefined): Middleware<AppState> {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = ctx.state.route ?? routeOf(ctx.method, ctx.path) ?? 'unmatched';
      metrics.request({ method: ctx.method, route, status: ctx.status }, (performance.now() - started) / 1000);
    }
  };
}
