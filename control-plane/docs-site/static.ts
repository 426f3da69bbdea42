// The documentation site's build (docs/.vitepress/dist, `npm run build:docs`) at /docs: clean URLs
// (/docs/quick-start is quick-start.html), index.html for a folder, hashed assets cached for good and pages
// never (a new build shows at once), and the site's own 404 page, with its status, for what the build lacks.
import { resolve } from 'node:path';
import type { Middleware } from 'koa';
import type { AppState } from '../http/context.ts';
import { fileIn, IMMUTABLE, sendFile } from '../http/static-files.ts';

const DOCS_PATH = '/docs';

/** The files a path under /docs may name, in turn: as written, then as a clean URL or a folder. */
const candidates = (path: string) => (path.endsWith('/') ? [`${path}index.html`] : [path, `${path}.html`, `${path}/index.html`]);

/**
 * Serves GET and HEAD under /docs from the folder. While the folder holds no 404.html (the build not run), a
 * path it lacks keeps the API's JSON 404.
 */
export function serveDocsSite(distDir: string): Middleware<AppState> {
  const root = resolve(distDir);
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    // The site's links and router work from its base, /docs/.
    if (ctx.path === DOCS_PATH) {
      ctx.status = 301;
      return ctx.redirect(`${DOCS_PATH}/${ctx.search}`);
    }
    if (!ctx.path.startsWith(`${DOCS_PATH}/`)) return next();
    const path = ctx.path.slice(DOCS_PATH.length);
    for (const candidate of candidates(path)) {
      const file = await fileIn(root, candidate);
      if (!file) continue;
      // VitePress names every file under assets/ by its content's hash.
      ctx.set('Cache-Control', path.startsWith('/assets/') ? IMMUTABLE : 'no-cache');
      if (file.path.endsWith('.html')) setPagePolicy(ctx);
      return sendFile(ctx, file);
    }
    const notFound = await fileIn(root, '/404.html');
    if (!notFound) return next();
    ctx.set('Cache-Control', 'no-cache');
    setPagePolicy(ctx);
    return sendFile(ctx, notFound, 404);
  };
}

/**
 * The pages talk only to Kiln (the API reference's requests) and no other site may frame them. VitePress
 * writes small scripts into each page (the colour scheme before it paints, the site's data), hence inline
 * scripts; the pages hold no session, only the token a reader types into the API reference.
 */
function setPagePolicy(ctx: Parameters<Middleware<AppState>>[0]) {
  ctx.set('Content-Security-Policy', [
    "default-src 'self'", "script-src 'self' 'unsafe-inline'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
    "connect-src 'self'", "object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'",
  ].join('; '));
  ctx.set('Referrer-Policy', 'same-origin');
}
