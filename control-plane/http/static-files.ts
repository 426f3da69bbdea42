// A built folder's files served by the API (the dashboard, the documentation site): which file a path names,
// and sending it.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import type { Middleware } from 'koa';
import type { AppState } from './context.ts';

type Context = Parameters<Middleware<AppState>>[0];

/** For files named by their content's hash (a bundler's assets): a new build is new names, so they never go stale. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The file `urlPath` (still encoded, as in ctx.path) names in the folder `root`, or undefined when it is no
 * file there: a bad encoding, a path that climbs out of the folder (/../../etc/passwd), a folder, nothing.
 */
export async function fileIn(root: string, urlPath: string): Promise<{ path: string; size: number } | undefined> {
  let relative: string;
  try {
    relative = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  const path = resolve(join(root, relative));
  if (!path.startsWith(root + sep)) return undefined;
  const found = await stat(path).catch(() => undefined);
  return found?.isFile() ? { path, size: found.size } : undefined;
}

/** Answers with the file, its type and length; HEAD gets the headers alone. */
export function sendFile(ctx: Context, file: { path: string; size: number }, status = 200): void {
  ctx.status = status;
  ctx.type = extname(file.path) || 'application/octet-stream';
  ctx.length = file.size;
  ctx.set('X-Content-Type-Options', 'nosniff');
  // Koa answers HEAD with the headers alone; a stream opened for it would never be read nor closed.
  if (ctx.method !== 'HEAD') ctx.body = createReadStream(file.path);
}
