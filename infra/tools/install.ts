// `npm run tools`: makes every external tool Kiln needs available in the cache, one progress line each.
// Idempotent: a warm run only checks stamp files. Exits non-zero naming the tool that failed.
import { performance } from 'node:perf_hooks';
import { ensureTool, isInstalled, ToolError } from './build.ts';
import { ensureDebianPackages } from './debian.ts';
import { ensurePulumiPlugins } from './pulumi-plugins.ts';
import { kilnCacheDir } from './paths.ts';
import { ensurePythonTool, isPythonToolInstalled } from './python.ts';
import { PYTHON_TOOLS, TOOLS, type PythonToolName, type ToolName } from './versions.ts';

const quiet = process.argv.includes('--quiet');
const say = (line: string) => { if (!quiet) console.log(line); };

async function main(): Promise<void> {
  say(`kiln tools: cache ${kilnCacheDir}`);
  for (const name of Object.keys(TOOLS) as ToolName[]) {
    const started = performance.now();
    if (!isInstalled(name)) say(`  ${name} ${TOOLS[name].version}: not in the cache yet, getting it (a build from Go modules takes minutes)`);
    const source = await ensureTool(name);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    say(`  ${name} ${TOOLS[name].version}: ${source === 'cache' ? 'cached' : `ready (${source}, ${seconds}s)`}`);
  }
  for (const plugin of await ensurePulumiPlugins()) say(`  pulumi plugin ${plugin}`);
  for (const name of Object.keys(PYTHON_TOOLS) as PythonToolName[]) {
    const started = performance.now();
    if (!isPythonToolInstalled(name)) say(`  ${name} ${PYTHON_TOOLS[name].version}: not in the cache yet, installing it from PyPI into a virtual environment`);
    const source = await ensurePythonTool(name);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    say(`  ${name} ${PYTHON_TOOLS[name].version}: ${source === 'cache' ? 'cached' : `ready (${source}, ${seconds}s)`}`);
  }
  await ensureDebianPackages(say);
}

main().catch((error: unknown) => {
  const message = error instanceof ToolError ? error.message : String((error as Error)?.stack ?? error);
  console.error(`kiln tools: FAILED ${message}`);
  process.exit(1);
});
