// When a build's sources last changed: the newest modification time of the files and folders given, searched
// through, but for the paths to leave out (a build's own output inside its sources). A folder's own time
// (it changes when a file is added or removed) counts unless `folderTimes` is false.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

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
