// Moves a diy backend's stacks into another (a file backend's into PostgreSQL): each file of the project layout
// copied as it is, the CLI's own bytes, so the stacks, their history and their backups read the same there.
// Idempotent: a file already there with the same contents is left; one there with other contents (the stack
// changed since in its new home) is left too, and reported. Locks are not moved: they belong to the processes
// that wrote them, which are gone.
import type { StateFiles } from './state-files.ts';

const META = '.pulumi/meta.yaml';
const PROJECT_LAYOUT = 'version: 1\n';

export interface StateMove {
  /** Stacks (`project/stack`) whose state was copied now. */
  readonly stacks: string[];
  /** Every file copied now, the stacks' included. */
  readonly moved: string[];
  /** Files the destination held already, the same. */
  readonly unchanged: string[];
  /** Files the destination holds with other contents: left as they are. */
  readonly differing: string[];
}

export async function moveState(from: StateFiles, to: StateFiles): Promise<StateMove> {
  const layout = (await from.read(META))?.toString();
  if (layout === undefined && !(await from.list('.pulumi/')).length) return { stacks: [], moved: [], unchanged: [], differing: [] };
  if (layout !== PROJECT_LAYOUT) throw new Error('the source is not of the project layout (.pulumi/meta.yaml at version 1): run `pulumi state upgrade` on it first');
  const destination = (await to.read(META))?.toString();
  if (destination === undefined && (await to.list('.pulumi/stacks/')).length) throw new Error('the destination holds stacks of the older layout');
  if (destination !== undefined && destination !== PROJECT_LAYOUT) throw new Error('the destination is not of the project layout');

  if (destination === undefined) await to.write(META, PROJECT_LAYOUT);
  const move: StateMove = { stacks: [], moved: [], unchanged: [], differing: [] };
  // Not moved either: a file backend's `.attrs` (go-cloud's notes beside each file) and writes cut short (`.tmp`).
  const paths = (await from.list('.pulumi/')).filter((path) => path !== META && !path.startsWith('.pulumi/locks/') && !/\.(attrs|tmp)$/.test(path));
  // The stacks last, so that a move cut short leaves no stack there without its history.
  const isStack = (path: string) => /^\.pulumi\/stacks\/[^/]+\/[^/]+\.json(\.gz|\.zst)?$/.test(path);
  for (const path of [...paths.filter((p) => !isStack(p)), ...paths.filter(isStack)]) {
    const contents = (await from.read(path))!;
    const there = await to.read(path);
    if (there?.equals(contents)) move.unchanged.push(path);
    else if (there !== undefined) move.differing.push(path);
    else {
      await to.write(path, contents);
      move.moved.push(path);
      if (isStack(path)) move.stacks.push(path.replace(/^\.pulumi\/stacks\//, '').replace(/\.json(\.gz|\.zst)?$/, ''));
    }
  }
  return move;
}
