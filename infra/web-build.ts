// The dashboard's build (web/ to web/dist, which the API serves at /): `npm start` builds it when web/dist is
// missing or older than its sources, so a fresh clone and an edited page both come up right; `npm run
// build:web` and `npm test` build it always.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { WEB_DIST } from '../control-plane/config.ts';
import { type StaleBuild } from './stale-build.ts';

const ROOT = resolve(import.meta.dirname, '..');
export const WEB_DIR = join(ROOT, 'web');
/** What the build reads: the app, its page and configuration, and the SDK it imports. */
const SOURCES = [join(WEB_DIR, 'src'), join(WEB_DIR, 'index.html'), join(WEB_DIR, 'vite.config.ts'), join(ROOT, 'client', 'sdk'), join(ROOT, 'package-lock.json')];

/**
 * Runs vite's production build (web/vite.config.ts), quiet but for warnings and errors, in a process of its own
 * with NODE_ENV=production: vite builds React's development bundle (larger and slower) whenever NODE_ENV says
 * otherwise, and a test runner sets it to `test`.
 */
export async function buildWeb(): Promise<void> {
  // The package's exports leave its bin out: found beside its package.json.
  const vite = join(dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
  await promisify(execFile)(process.execPath, [vite, 'build', '--config', join(WEB_DIR, 'vite.config.ts'), '--logLevel', 'warn'], {
    cwd: ROOT, env: { ...process.env, NODE_ENV: 'production' },
  });
}

/** The dashboard, as npm start builds it when missing or stale (stale-build.ts). */
export const webBuild: StaleBuild = { name: 'dashboard', dist: WEB_DIST, sources: SOURCES, build: buildWeb };
