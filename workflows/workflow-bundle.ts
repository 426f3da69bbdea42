// A queue's workflow code, bundled once and kept under DATA_DIR/workflow-bundles: bundling (webpack) takes
// seconds per queue, so a worker (or a test) reuses the bundle until a file the workflows import changes or
// the Temporal SDK does, as Temporal advises for production (`workflowBundle` instead of `workflowsPath`).
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import type { Logger } from '@temporalio/common';
import { bundleWorkflowCode } from '@temporalio/worker';

const sdkVersion = (name: string): string => (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version;

/** Bundled with every queue's workflows: the run's outcome, reported to the worker's metrics. */
const WORKFLOW_INTERCEPTORS = new URL('./workflow-interceptors.ts', import.meta.url).pathname;

/** Bundles being built by this process: workers created at once share one build. */
const building = new Map<string, Promise<string>>();

/** The bundle's file for these workflows (built now if missing or stale): pass it as `workflowBundle: { codePath }`. */
export async function workflowBundle(workflowsPath: string, dir: string, logger: Logger): Promise<string> {
  const name = `${basename(dirname(workflowsPath))}-${basename(workflowsPath, '.ts')}`;
  const file = join(dir, `${name}-${await sourceHash(workflowsPath)}.js`);
  if (!building.has(file)) building.set(file, build(workflowsPath, name, file, logger).finally(() => building.delete(file)));
  return building.get(file)!;
}

async function build(workflowsPath: string, name: string, file: string, logger: Logger): Promise<string> {
  try {
    await stat(file);
    return file;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const { code } = await bundleWorkflowCode({ workflowsPath, logger, workflowInterceptorModules: [WORKFLOW_INTERCEPTORS] });
  const dir = dirname(file);
  await mkdir(dir, { recursive: true });
  // Written aside then renamed: another process starting at the same time never reads half a bundle.
  const partial = `${file}.${randomUUID()}.partial`;
  await writeFile(partial, code);
  await rename(partial, file);
  for (const old of await readdir(dir)) {
    if (old.startsWith(`${name}-`) && old.endsWith('.js') && join(dir, old) !== file) await rm(join(dir, old), { force: true });
  }
  return file;
}

/**
 * What the bundle is built from: the workflow file and the interceptors, every file they import by relative
 * path (type-only imports bring no code in, so changing an activity does not rebuild it), and the SDK.
 */
async function sourceHash(workflowsPath: string): Promise<string> {
  const hash = createHash('sha256').update(`${sdkVersion('@temporalio/workflow')} ${sdkVersion('@temporalio/worker')}\n`);
  const seen = new Set<string>();
  const visit = async (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = await readFile(file, 'utf8');
    hash.update(`${file}\n${text}\n`);
    for (const [, spec] of text.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^;']*?\sfrom\s+)?'(\.\.?\/[^']+)'/gm)) {
      await visit(resolve(dirname(file), spec!));
    }
  };
  await visit(resolve(workflowsPath));
  await visit(WORKFLOW_INTERCEPTORS);
  return hash.digest('hex').slice(0, 16);
}
