// The dashboard's build (web/ to web/dist, which the API serves at /): `npm start` builds it when web/dist is
// missing or older than its sources, so a fresh clone and an edited page both come up right; `npm run
// build:web` and `npm test` build it always.
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { WEB_DIST } from '../control-plane/config.ts';
import { newestChange } from './newest-change.ts';

const ROOT = resolve(import.meta.dirname, '..');
export const WEB_DIR = join(ROOT, 'web');
/** What the build reads: the app, its page and configuration, and the SDK it imports. */
const SOURCES = [join(WEB_DIR, 'src'), join(WEB_DIR, 'index.html'), join(WEB_DIR, 'vite.config.ts'), join(ROOT, 'client', 'sdk'), join(ROOT, 'package-lock.json')];

/** Why the build must run, or undefined when web/dist is newer than every source. */
export async function webBuildReason(): Promise<string | undefined> {
  const built = await stat(join(WEB_DIST, 'index.html')).catch(() => undefined);
  if (!built) return 'web/dist is missing';
  return await newestChange(SOURCES) > built.mtimeMs ? 'its sources changed since the last build' : undefined;
}

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

/** For npm start: builds when needed and says what it did in one line. */
export async function ensureWebBuilt(say: (line: string) => void): Promise<void> {
  const reason = await webBuildReason();
  if (!reason) {
    say(`dashboard: ${WEB_DIST} is up to date`);
    return;
  }
  const started = performance.now();
  await buildWeb();
  say(`dashboard: built ${WEB_DIST} in ${((performance.now() - started) / 1000).toFixed(1)} s (${reason})`);
}
