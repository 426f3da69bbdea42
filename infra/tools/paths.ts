// Where Kiln keeps the tools it builds: outside the repo, so clean clones and CI reuse one cache.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PYTHON_TOOLS, TOOLS, type PythonToolName, type ToolName } from './versions.ts';

export const kilnCacheDir = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'kiln');

/** Pulumi's own home (plugins, workspace metadata) lives in the cache too, so plugins are never downloaded. */
export const pulumiHome = join(kilnCacheDir, 'pulumi-home');

export function toolDir(name: ToolName): string {
  return join(kilnCacheDir, 'tools', `${name}-${TOOLS[name].version}`);
}

/** Absolute path of one of a tool's binaries (e.g. binaryPath('kubernetes', 'kube-apiserver')). */
export function binaryPath(name: ToolName, binary: string = name): string {
  return join(toolDir(name), 'bin', binary);
}

/** A PyPI tool's folder: its virtual environment (`venv/`) and the stamp of a complete install. */
export function pythonToolDir(name: PythonToolName): string {
  return join(kilnCacheDir, 'tools', `${name}-${PYTHON_TOOLS[name].version}`);
}

/** Absolute path of a PyPI tool's command (e.g. pythonToolBinary('schemathesis')). */
export function pythonToolBinary(name: PythonToolName, binary: string = name): string {
  return join(pythonToolDir(name), 'venv', 'bin', binary);
}

/** PATH with every tool's bin folder first, for child processes such as the Pulumi CLI's plugins. */
export function toolsPath(): string {
  const dirs = (Object.keys(TOOLS) as ToolName[]).map((name) => join(toolDir(name), 'bin'));
  return [...dirs, process.env.PATH ?? ''].join(':');
}

/** The worker's Pulumi settings (control-plane/config.ts) for the CLI and plugins `npm run tools` installs. */
export function pulumiToolsEnv(): { PULUMI_HOME: string; KILN_PULUMI_CLI_ROOT: string } {
  return { PULUMI_HOME: pulumiHome, KILN_PULUMI_CLI_ROOT: toolDir('pulumi') };
}
