// The documentation site's build (docs/ to docs/.vitepress/dist, which the API serves at /docs): `npm start`
// builds it when it is missing or older than its sources, as it does the dashboard; `npm run build:docs` and
// `npm test` build it always (a dead link fails the build).
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DOCS_DIST } from '../control-plane/config.ts';
import { type StaleBuild } from './stale-build.ts';

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

/** Runs `vitepress build docs` in a process of its own: its progress is kept, its failure (a dead link) said. */
export async function buildDocs(): Promise<void> {
  const vitepress = join(dirname(createRequire(import.meta.url).resolve('vitepress/package.json')), 'bin', 'vitepress.js');
  await promisify(execFile)(process.execPath, [vitepress, 'build', DOCS_DIR], { cwd: ROOT, env: { ...process.env, NODE_ENV: 'production' } });
}

/** The documentation site, as npm start builds it when missing or stale (stale-build.ts). */
export const docsBuild: StaleBuild = { name: 'documentation', dist: DOCS_DIST, sources: SOURCES, notSources: NOT_SOURCES, build: buildDocs };
