// First middleware after the request id: renders every failure (thrown errors, and statuses left by the
// router such as 404 and 405) in the surface's error format. Nothing escapes as a raw 500.
import type { Middleware } from 'koa';
import type { AppState } from './context.ts';
import { describeError, isDataException, type ErrorDescription } from '../core/errors.ts';
import { errorBody } from './surface.ts';

const STATUS_ONLY: Record<number, Pick<ErrorDescription, 'code' | 'message'>> = {
  404: { code: 'NOT_FOUND', message: 'Not found' },
  405: { code: 'METHOD_NOT_ALLOWED', message: 'Method not allowed' },
};

export interface ErrorHandlerDeps {
  /** Told of every unhandled error (answered as 500), for the error tracker. */
  onUnhandled?: (error: unknown, context: { method: string; path: string; requestId: string }) => Promise<void>;
}

export function errorHandler(deps: ErrorHandlerDeps = {}): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body == null && ctx.status >= 400) {
        const status = ctx.status;
        const known = STATUS_ONLY[status] ?? { code: 'ERROR', message: 'Request failed' };
        ctx.body = errorBody(ctx.state.surface, { status, ...known, details: {} });
        ctx.status = status; // Koa turns an implicit 404 into 200 when a body is set
      }
    } catch (error) {
      const e = describeError(error);
      if (e.status >= 500) ctx.state.log.error({ err: error }, 'request failed');
      // Answered 400, but a check is missing before the database: worth a look.
      else if (isDataException(error)) ctx.state.log.error({ err: error }, 'a value reached the database unvalidated');
      if (e.status === 500) await deps.onUnhandled?.(error, { method: ctx.method, path: ctx.path, requestId: ctx.state.requestId });
      ctx.status = e.status;
      ctx.set(e.headers);
      ctx.body = errorBody(ctx.state.surface, e);
    }
  };
}
