// A build npm start runs only when its output is missing or older than its sources (the dashboard, the docs
// site). When sources last changed: the newest modification time of the files and folders given, searched
// through, but for the paths to leave out (a build's own output inside its sources). A folder's own time
// (it changes when a file is added or removed) counts unless `folderTimes` is false.
import { readdir, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

export interface NewestChangeOptions {
  leaveOut?: readonly string[];
  folderTimes?: boolean;
}

export async function newestChange(paths: readonly string[], options: NewestChangeOptions = {}): Promise<number> {
  const { leaveOut = [], folderTimes = true } = options;
  const times = await Promise.all(paths.filter((path) => !leaveOut.includes(path)).map(async (path) => {
    const info = await stat(path).catch(() => undefined);
    if (!info?.isDirectory()) return info?.mtimeMs ?? 0;
    const entries = (await readdir(path)).map((entry) => join(path, entry));
    return Math.max(folderTimes ? info.mtimeMs : 0, await newestChange(entries, options));
  }));
  return Math.max(0, ...times);
}

export interface StaleBuild {
  /** What it builds, in npm start's line: `dashboard`. */
  readonly name: string;
  /** Its output folder, holding an index.html once built. */
  readonly dist: string;
  readonly sources: readonly string[];
  readonly notSources?: NewestChangeOptions;
  build(): Promise<void>;
}

/** Why the build must run, or undefined when its output is newer than every source. */
export async function staleReason(build: StaleBuild): Promise<string | undefined> {
  const built = await stat(join(build.dist, 'index.html')).catch(() => undefined);
  if (!built) return `${relative(ROOT, build.dist)} is missing`;
  return await newestChange(build.sources, build.notSources) > built.mtimeMs ? 'its sources changed since the last build' : undefined;
}

/** For npm start: builds when needed and says what it did in one line. */
export async function ensureBuilt(build: StaleBuild, say: (line: string) => void): Promise<void> {
  const reason = await staleReason(build);
  if (!reason) {
    say(`${build.name}: ${build.dist} is up to date`);
    return;
  }
  const started = performance.now();
  await build.build();
  say(`${build.name}: built ${build.dist} in ${((performance.now() - started) / 1000).toFixed(1)} s (${reason})`);
}
