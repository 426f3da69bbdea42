// What Kiln reads and writes itself in a file state backend (Pulumi's diy backend, project-scoped layout), each
// in place of a Pulumi CLI run (0.3 to 0.5 CPU-seconds each): whether a stack exists, a new stack's state as
// `pulumi stack init` writes it, and the lock a dead worker left. Layout and formats as the CLI's Go source
// has them (pkg backend/diy: meta.go, store.go, state.go; cmd/pulumi/stack/io.go CreateStack).
import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

const exists = (path: string) => access(path).then(() => true, () => false);
const stateFile = (stateDir: string, project: string, stackName: string) => join(stateDir, '.pulumi', 'stacks', project, `${stackName}.json`);

/** Whether a file backend holds the stack's state (plain or gzipped). */
export async function fileBackendHolds(stateDir: string, project: string, stackName: string): Promise<boolean> {
  const base = stateFile(stateDir, project, stackName);
  for (const path of [base, `${base}.gz`]) if (await exists(path)) return true;
  return false;
}

/**
 * Replaces a file whole: written aside, then renamed over it, so a process killed meanwhile leaves the old file or
 * the new one. The name aside is the one Pulumi's own writes use (`<file>.<hex>.tmp`), which its stack listing skips.
 */
export async function writeAtomically(path: string, contents: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const aside = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  try {
    await writeFile(aside, contents);
    await rename(aside, path);
  } finally {
    await rm(aside, { force: true });
  }
}

/**
 * The folder of a file backend (`file://...`) that keeps stacks per project (`.pulumi/meta.yaml` at version 1),
 * the layout Kiln reads and writes; a backend holding nothing yet is given it, as the CLI gives it to a new one.
 * Undefined for other backends, and for a file backend of the older layout (the CLI does everything there).
 */
export async function projectFileBackend(backendUrl: string): Promise<string | undefined> {
  if (!backendUrl.startsWith('file://')) return undefined;
  const stateDir = new URL(backendUrl).pathname;
  const meta = join(stateDir, '.pulumi', 'meta.yaml');
  const text = await readFile(meta, 'utf8').catch(() => undefined);
  if (text !== undefined) return text === 'version: 1\n' ? stateDir : undefined;
  if (await exists(join(stateDir, '.pulumi', 'stacks'))) return undefined;
  await writeAtomically(meta, 'version: 1\n');
  return stateDir;
}

/**
 * Writes a new stack's state as `pulumi stack init` with the passphrase secrets provider does: an empty
 * deployment whose manifest names the CLI's version and whose secrets provider holds the stack's salt line.
 */
export async function createFileBackendStack(
  stateDir: string, stack: { project: string; stackName: string; saltLine: string; cliVersion: string },
): Promise<void> {
  const manifest = { time: new Date().toISOString(), magic: createHash('sha256').update(stack.cliVersion).digest('hex'), version: stack.cliVersion };
  const checkpoint = {
    version: 3,
    checkpoint: {
      stack: `organization/${stack.project}/${stack.stackName}`,
      latest: { manifest, secrets_providers: { type: 'passphrase', state: { salt: stack.saltLine } }, metadata: {} },
    },
  };
  await writeAtomically(stateFile(stateDir, stack.project, stack.stackName), JSON.stringify(checkpoint));
}

/** Removes a file backend's lock of one stack; answers whether there was one. */
export async function clearStaleLock(stateDir: string, project: string, stackName: string): Promise<boolean> {
  const locks = join(stateDir, '.pulumi', 'locks');
  const entries = await readdir(locks, { recursive: true }).catch(() => [] as string[]);
  const stale = entries.filter((path) => path.endsWith('.json') && path.split('/').slice(-3, -1).join('/') === `${project}/${stackName}`);
  await Promise.all(stale.map((path) => rm(join(locks, path), { force: true })));
  return stale.length > 0;
}
