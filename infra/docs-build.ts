// The documentation site's build (docs/ to docs/.vitepress/dist, which the API serves at /docs): `npm start`
// builds it when it is missing or older than its sources, as it does the dashboard; `npm run build:docs` and
// `npm test` build it always (a dead link fails the build).
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DOCS_DIST } from '../control-plane/config.ts';
import { newestChange } from './newest-change.ts';

const ROOT = resolve(import.meta.dirname, '..');
const DOCS_DIR = join(ROOT, 'docs');
/** What the build reads: the pages and the site's code, the root's pages they may include, the packages. */
const SOURCES = [DOCS_DIR, join(ROOT, 'README.md'), join(ROOT, 'ARCHITECTURE.md'), join(ROOT, 'package-lock.json')];
/**
 * VitePress's output and cache, inside docs/, are no sources. Nor are folders' own times: the build makes and
 * removes docs/.temp, which changes docs/'s time after the output's (a page removed alone is built with the
 * next change, or by npm test).
 */
const NOT_SOURCES = { leaveOut: [DOCS_DIST, join(DOCS_DIR, '.vitepress', 'cache')], folderTimes: false };

/** Why the build must run, or undefined when the site is newer than every source. */
export async function docsBuildReason(): Promise<string | undefined> {
  const built = await stat(join(DOCS_DIST, 'index.html')).catch(() => undefined);
  if (!built) return 'docs/.vitepress/dist is missing';
  return await newestChange(SOURCES, NOT_SOURCES) > built.mtimeMs ? 'its sources changed since the last build' : undefined;
}

/** Runs `vitepress build docs` in a process of its own: its progress is kept, its failure (a dead link) said. */
export async function buildDocs(): Promise<void> {
  const vitepress = join(dirname(createRequire(import.meta.url).resolve('vitepress/package.json')), 'bin', 'vitepress.js');
  await promisify(execFile)(process.execPath, [vitepress, 'build', DOCS_DIR], { cwd: ROOT, env: { ...process.env, NODE_ENV: 'production' } });
}

/** For npm start: builds when needed and says what it did in one line. */
export async function ensureDocsBuilt(say: (line: string) => void): Promise<void> {
  const reason = await docsBuildReason();
  if (!reason) {
    say(`documentation: ${DOCS_DIST} is up to date`);
    return;
  }
  const started = performance.now();
  await buildDocs();
  say(`documentation: built ${DOCS_DIST} in ${((performance.now() - started) / 1000).toFixed(1)} s (${reason})`);
}
