// Programs Kiln's tests need from Debian packages (versions.ts DEBIAN_PACKAGES). A package whose commands are
// missing is installed with apt-get when the process runs as root on a machine that has it (CI and the
// developers' machines, whose installs do not survive a new machine); elsewhere `npm run tools` says what to run.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { ToolError } from './build.ts';
import { DEBIAN_PACKAGES, type DebianPackageName } from './versions.ts';

const run = promisify(execFile);

/** Whether `command` is an executable file in a folder of PATH. */
export function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => {
    try {
      accessSync(join(dir || '.', command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

const missingCommands = (name: DebianPackageName) => DEBIAN_PACKAGES[name].commands.filter((command) => !onPath(command));

/** Installs the packages with a missing command, one progress line each; `say` prints a line. */
export async function ensureDebianPackages(say: (line: string) => void): Promise<void> {
  const missing = (Object.keys(DEBIAN_PACKAGES) as DebianPackageName[]).filter((name) => missingCommands(name).length > 0);
  for (const name of Object.keys(DEBIAN_PACKAGES) as DebianPackageName[]) if (!missing.includes(name)) say(`  ${name} (${DEBIAN_PACKAGES[name].commands.join(', ')}): installed`);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0 || !onPath('apt-get')) {
    for (const name of missing) say(`  ${name}: ${missingCommands(name).join(', ')} missing (${DEBIAN_PACKAGES[name].why}); install it with: sudo apt-get install ${name}`);
    return;
  }
  const started = performance.now();
  say(`  ${missing.join(', ')}: not installed, getting ${missing.length === 1 ? 'it' : 'them'} with apt-get`);
  const apt = (args: string[]) => run('apt-get', args, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, maxBuffer: 64 * 1024 * 1024 })
    .catch((e: { stderr?: string; message: string }) => {
      throw new ToolError(missing.join(', '), `apt-get ${args.join(' ')} failed:\n${(e.stderr ?? '').trim().split('\n').slice(-15).join('\n') || e.message}`);
    });
  // Once per run, before the install: a fresh machine's package lists are empty or old.
  await apt(['update']);
  await apt(['install', '-y', '--no-install-recommends', ...missing]);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  for (const name of missing) {
    const still = missingCommands(name);
    if (still.length > 0) throw new ToolError(name, `installed, but ${still.join(', ')} is not on PATH`);
    say(`  ${name} (${DEBIAN_PACKAGES[name].commands.join(', ')}): ready (apt-get, ${seconds}s)`);
  }
}
