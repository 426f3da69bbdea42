// What Kiln reads and writes itself in a diy state backend of the project-scoped layout (a folder or a PostgreSQL
// table: state-files.ts), each in place of a Pulumi CLI run (0.3 to 0.5 CPU-seconds each): whether a stack
// exists, a new stack's state as `pulumi stack init` writes it, the lock a dead worker left, and the removal of
// a stack made for one preview. Layout and
// formats as the CLI's Go source has them (pkg backend/diy: meta.go, store.go, state.go, lock.go;
// cmd/pulumi/stack/io.go CreateStack).
import { createHash } from 'node:crypto';
import type { StateFiles } from './state-files.ts';
import { stateFolder } from './state-folder.ts';
import { stateTable } from './state-table.ts';

const META = '.pulumi/meta.yaml';
const stackFile = (project: string, stackName: string) => `.pulumi/stacks/${project}/${stackName}.json`;

/** The files of a `file://` or `postgres://` backend, which Kiln reads and writes; undefined for the others (the CLI alone does). */
export function stateFilesOf(backendUrl: string): StateFiles | undefined {
  if (backendUrl.startsWith('file://')) return stateFolder(new URL(backendUrl).pathname);
  if (backendUrl.startsWith('postgres://')) return stateTable(backendUrl);
  return undefined;
}

/** A backend's stacks, where Kiln keeps them itself. */
export interface StackStore {
  /** Whether it holds the stack's state (plain or compressed). */
  holds(project: string, stackName: string): Promise<boolean>;
  /**
   * Writes a new stack's state as `pulumi stack init` with the passphrase secrets provider does: an empty
   * deployment whose manifest names the CLI's version and whose secrets provider holds the stack's salt line.
   * One file, written whole (the CLI also leaves a `.bak` of an intermediate state, which nothing reads).
   */
  create(stack: { project: string; stackName: string; saltLine: string; cliVersion: string }): Promise<void>;
  /** Removes the stack's locks; answers whether there was one. */
  clearLocks(project: string, stackName: string): Promise<boolean>;
  /**
   * Removes the state of a stack only previewed since it was made, all a preview leaves (it writes no state, no
   * history and no lock). `pulumi stack rm --force` would also copy the state aside to a `.bak` first.
   */
  removePreviewed(project: string, stackName: string): Promise<void>;
}

/**
 * The stacks of a file or PostgreSQL backend that keeps them per project (`.pulumi/meta.yaml` at version 1);
 * a backend holding nothing yet is given that layout, as the CLI gives it to a new one. Undefined for other
 * backends, and for one of the older layout (the CLI does everything there).
 */
export async function projectStackStore(backendUrl: string): Promise<StackStore | undefined> {
  const files = stateFilesOf(backendUrl);
  if (!files) return undefined;
  const meta = (await files.read(META))?.toString();
  if (meta !== undefined) return meta === 'version: 1\n' ? stackStore(files) : undefined;
  if ((await files.list('.pulumi/stacks/')).length) return undefined;
  await files.write(META, 'version: 1\n');
  return stackStore(files);
}

function stackStore(files: StateFiles): StackStore {
  /** A stack's state file, plain or compressed (the CLI reads whichever is newest). */
  const stateFiles = (project: string, stackName: string) => {
    const base = stackFile(project, stackName);
    return [base, `${base}.gz`, `${base}.zst`];
  };
  return {
    async holds(project, stackName) {
      return (await Promise.all(stateFiles(project, stackName).map((path) => files.exists(path)))).includes(true);
    },
    async create({ project, stackName, saltLine, cliVersion }) {
      const manifest = { time: new Date().toISOString(), magic: createHash('sha256').update(cliVersion).digest('hex'), version: cliVersion };
      const checkpoint = {
        version: 3,
        checkpoint: {
          stack: `organization/${project}/${stackName}`,
          latest: { manifest, secrets_providers: { type: 'passphrase', state: { salt: saltLine } }, metadata: {} },
        },
      };
      await files.write(stackFile(project, stackName), JSON.stringify(checkpoint));
    },
    async clearLocks(project, stackName) {
      const locks = (await files.list(`.pulumi/locks/organization/${project}/${stackName}/`)).filter((path) => path.endsWith('.json'));
      await files.remove(locks);
      return locks.length > 0;
    },
    async removePreviewed(project, stackName) {
      await files.remove(stateFiles(project, stackName));
    },
  };
}
