// A file backend's files (`file://<folder>`), as the CLI keeps them: plain files under the folder.
import { randomBytes } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { StateFiles } from './state-files.ts';

/**
 * Replaces a file whole: written aside, then renamed over it, so a process killed meanwhile leaves the old file or
 * the new one. The name aside is the one Pulumi's own writes use (`<file>.<hex>.tmp`), which its stack listing skips.
 */
export async function writeAtomically(path: string, contents: string | Buffer): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const aside = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  try {
    await writeFile(aside, contents);
    await rename(aside, path);
  } finally {
    await rm(aside, { force: true });
  }
}

export function stateFolder(root: string): StateFiles {
  return {
    read: (path) => readFile(join(root, path)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    }),
    exists: (path) => access(join(root, path)).then(() => true, () => false),
    write: (path, contents) => writeAtomically(join(root, path), contents),
    async list(folder) {
      const entries = await readdir(join(root, folder), { recursive: true, withFileTypes: true }).catch(() => []);
      return entries.filter((entry) => entry.isFile()).map((entry) => relative(root, join(entry.parentPath, entry.name)));
    },
    remove: async (paths) => void await Promise.all(paths.map((path) => rm(join(root, path), { force: true }))),
  };
}
