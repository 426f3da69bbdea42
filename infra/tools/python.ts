// Gets one PyPI tool into the cache: a virtual environment made with the `python3` on PATH (or KILN_PYTHON),
// then `pip install <package>==<version>` under the tool's constraints file. A virtual environment keeps its
// own absolute path in its scripts, so it is made where it stays rather than renamed into place; the stamp
// written last marks it complete, and a folder without one (an interrupted run) is made again from scratch.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ToolError } from './build.ts';
import { pythonToolBinary, pythonToolDir } from './paths.ts';
import { PYTHON_TOOLS, type PythonToolName } from './versions.ts';

const run = promisify(execFile);

/** Complete, and its interpreter still there (a virtual environment links to the Python that made it). */
export const isPythonToolInstalled = (name: PythonToolName) =>
  existsSync(join(pythonToolDir(name), '.complete')) && existsSync(join(pythonToolDir(name), 'venv', 'bin', 'python'));

export async function ensurePythonTool(name: PythonToolName): Promise<'cache' | 'pip'> {
  if (isPythonToolInstalled(name)) return 'cache';
  const spec = PYTHON_TOOLS[name];
  const dir = pythonToolDir(name);
  const venv = join(dir, 'venv');
  const python = process.env.KILN_PYTHON || 'python3';
  const step = (what: string, command: string, args: string[]) =>
    run(command, args, { maxBuffer: 16 * 1024 * 1024 }).catch((e: { stdout?: string; stderr?: string; message: string }) => {
      throw new ToolError(name, `${what} failed:\n${`${e.stderr ?? ''}${e.stdout ?? ''}`.trim().split('\n').slice(-25).join('\n') || e.message}`);
    });
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  try {
    await step(`${python} -m venv (Python 3.10 or later with its venv module is needed; on Debian: apt-get install python3-venv)`, python, ['-m', 'venv', venv]);
    const constraints = fileURLToPath(new URL(spec.constraints, import.meta.url));
    await step(`pip install ${spec.package}==${spec.version}`, join(venv, 'bin', 'python'), [
      '-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--quiet', `${spec.package}==${spec.version}`, '--constraint', constraints,
    ]);
    const [binary, args] = Object.entries(spec.binaries)[0]!;
    const { stdout, stderr } = await step(`${binary} ${args.join(' ')}`, pythonToolBinary(name, binary), [...args]);
    if (!`${stdout}${stderr}`.includes(spec.version)) throw new ToolError(name, `${binary} reports ${`${stdout}${stderr}`.trim()}, not ${spec.version}`);
    const { stdout: pythonVersion } = await step('python --version', join(venv, 'bin', 'python'), ['--version']);
    await writeFile(join(dir, '.complete'), `${spec.version} pip ${pythonVersion.trim()} ${new Date().toISOString()}\n`);
    return 'pip';
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error instanceof ToolError ? error : new ToolError(name, (error as Error).message);
  }
}
