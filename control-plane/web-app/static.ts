// The dashboard's built files (web/dist, `npm run build:web`) and the single-page app's fallback: a browser
// that navigates to /deployments/abc gets index.html and the app's router takes it from there.
import { resolve } from 'node:path';
import type { Middleware } from 'koa';
import type { AppState } from '../http/context.ts';
import { fileIn, IMMUTABLE, sendFile } from '../http/static-files.ts';

/** Paths that belong to the API and its tools even where no route is declared: their 404 stays Kiln's JSON. */
const RESERVED = ['/v1', '/v2', '/api', '/metrics', '/docs', '/openapi', '/graphql', '/health'];
const isReserved = (path: string) => RESERVED.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));

/**
 * Serves GET and HEAD of the dist folder's files, and index.html (never cached, so a new build is picked up
 * at once) for any other page a browser asks for (Accept: text/html). API clients asking for an unknown path
 * still get the JSON 404, and nothing is served while the folder holds no index.html (the build not run).
 */
export function serveWebApp(distDir: string): Middleware<AppState> {
  const root = resolve(distDir);
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || isReserved(ctx.path)) return next();
    const file = await fileIn(root, ctx.path);
    if (file) {
      // Vite names every file under assets/ by its content's hash.
      ctx.set('Cache-Control', ctx.path.startsWith('/assets/') ? IMMUTABLE : 'no-cache');
      if (file.path.endsWith('.html')) setPagePolicy(ctx);
      return sendFile(ctx, file);
    }
    if (ctx.path.startsWith('/assets/') || !ctx.accepts('html') || ctx.get('Accept') === '') return next();
    const index = await fileIn(root, '/index.html');
    if (!index) return next();
    ctx.set('Cache-Control', 'no-cache');
    setPagePolicy(ctx);
    return sendFile(ctx, index);
  };
}

/**
 * The page runs only Kiln's own scripts and talks only to Kiln (its API and live socket): an injected script
 * could read the session the app keeps in localStorage, so none but the built files may run, and no other
 * site may frame the page.
 */
function setPagePolicy(ctx: Parameters<Middleware<AppState>>[0]) {
  ctx.set('Content-Security-Policy', [
    "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data: blob:",
    `connect-src 'self' ws://${ctx.host} wss://${ctx.host}`, "object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'",
  ].join('; '));
  ctx.set('Referrer-Policy', 'same-origin');
}
