// The dashboard's built files (web/dist, `npm run build:web`) and the single-page app's fallback: a browser
// that navigates to /deployments/abc gets index.html and the app's router takes it from there.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import type { Middleware } from 'koa';
import type { AppState } from '../http/context.ts';

/** Paths that belong to the API and its tools even where no route is declared: their 404 stays Kiln's JSON. */
const RESERVED = ['/v1', '/v2', '/api', '/metrics', '/docs', '/openapi', '/graphql', '/health'];
const isReserved = (path: string) => RESERVED.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));

/** Vite names every file under assets/ by its content's hash: a new build is new names, so they never go stale. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

async function fileAt(path: string): Promise<{ size: number } | undefined> {
  try {
    const found = await stat(path);
    return found.isFile() ? found : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Serves GET and HEAD of the dist folder's files, and index.html (never cached, so a new build is picked up
 * at once) for any other page a browser asks for (Accept: text/html). API clients asking for an unknown path
 * still get the JSON 404, and nothing is served while the folder holds no index.html (the build not run).
 */
export function serveWebApp(distDir: string): Middleware<AppState> {
  const root = resolve(distDir);
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || isReserved(ctx.path)) return next();
    let relative: string;
    try {
      relative = decodeURIComponent(ctx.path);
    } catch {
      return next();
    }
    const candidate = resolve(join(root, relative));
    // A path that climbs out of the folder (/../../etc/passwd) is not the dashboard's.
    const inside = candidate === root || candidate.startsWith(root + sep);
    const file = inside && candidate !== root ? await fileAt(candidate) : undefined;
    if (file) {
      ctx.set('Cache-Control', relative.startsWith('/assets/') ? IMMUTABLE : 'no-cache');
      if (candidate.endsWith('.html')) setPagePolicy(ctx);
      return send(ctx, candidate, file.size);
    }
    if (relative.startsWith('/assets/') || !ctx.accepts('html') || ctx.get('Accept') === '') return next();
    const index = join(root, 'index.html');
    const page = await fileAt(index);
    if (!page) return next();
    ctx.set('Cache-Control', 'no-cache');
    setPagePolicy(ctx);
    return send(ctx, index, page.size);
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

function send(ctx: Parameters<Middleware<AppState>>[0], path: string, size: number) {
  ctx.type = extname(path) || 'application/octet-stream';
  ctx.length = size;
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.status = 200;
  // Koa answers HEAD with the headers alone; a stream opened for it would never be read nor closed.
  if (ctx.method !== 'HEAD') ctx.body = createReadStream(path);
}
