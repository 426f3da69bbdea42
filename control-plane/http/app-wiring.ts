// What the API's Koa app (app.ts) and the inference gateway's (gateway/app.ts) share around their routes: how a
// URL is named by the route it would match, and where failures after an answer has started are reported.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { AppState } from './context.ts';

/** The declared path (`/v1/deployments/{id}`) of whatever route the URL names, for requests answered before reaching it. */
export function declaredRouteOf(router: Router<AppState>): (method: string, path: string) => string | undefined {
  return (method, path) => {
    const declared = router.match(path, method).path[0]?.path;
    return typeof declared === 'string' ? declared.replace(/:(\w+)/g, '{$1}') : undefined;
  };
}

/**
 * Failures once an answer has started (a streamed body breaking off, a client leaving mid-download) reach Koa's
 * error event, not the error handler: into the structured log, not stderr.
 */
export function logAnswerFailures(app: Koa<AppState>, log: Logger): void {
  app.on('error', (error: NodeJS.ErrnoException, ctx?: Koa.ParameterizedContext<AppState>) => {
    const logger = ctx?.state.log ?? log;
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE' || error.code === 'ECONNRESET') logger.info({ err: error }, 'client closed the connection mid-answer');
    else logger.error({ err: error }, 'answer failed after it started');
  });
}
