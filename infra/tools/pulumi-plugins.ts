// Provider plugins for the Pulumi CLI, so Pulumi never tries to download one. Each plugin is the binary of a
// tool `npm run tools` built or downloaded (versions.ts), given to `pulumi plugin install --file`, which
// copies it into Kiln's PULUMI_HOME as `plugins/<kind>-<name>-v<version>/pulumi-<kind>-<name>`. A stamp beside it
// (kiln-plugin.json) records which build of the tool it is, so a rebuilt tool is installed again.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ToolError } from './build.ts';
import { binaryPath, pulumiHome, toolDir } from './paths.ts';
import { PULUMI_PLUGINS } from './versions.ts';

const run = promisify(execFile);

/** Environment for any Pulumi CLI process Kiln starts: its own home, no update checks, no telemetry. */
export function pulumiEnv(): Record<string, string> {
  return {
    PULUMI_HOME: pulumiHome,
    PULUMI_SKIP_UPDATE_CHECK: 'true',
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: 'false',
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
  };
}

export type PulumiPlugin = (typeof PULUMI_PLUGINS)[number];

const STAMP = 'kiln-plugin.json';

/** The folder Pulumi keeps the plugin in (`resource-kubernetes-v4.25.0`). */
export function pluginDir(plugin: PulumiPlugin): string {
  return join(pulumiHome, 'plugins', `${plugin.kind}-${plugin.name}-v${plugin.version}`);
}

/** The plugin's file name, in its tool's bin folder and in the plugin folder alike. */
const pluginFile = (plugin: PulumiPlugin) => `pulumi-${plugin.kind}-${plugin.name}`;

export function pluginBinary(plugin: PulumiPlugin): string {
  return join(pluginDir(plugin), pluginFile(plugin));
}

/** The tool's build of the plugin, which is copied into the plugin folder. */
export function builtPlugin(plugin: PulumiPlugin): string {
  return binaryPath(plugin.tool, pluginFile(plugin));
}

/** The tool build's own stamp (`.complete`: version, source, time), which the plugin's stamp must repeat. */
const toolStamp = (plugin: PulumiPlugin) => readFileSync(join(toolDir(plugin.tool), '.complete'), 'utf8').trim();

/** Installed, complete, and a copy of the tool build in the cache now. */
export function isPluginCurrent(plugin: PulumiPlugin): boolean {
  const stamp = join(pluginDir(plugin), STAMP);
  if (!existsSync(pluginBinary(plugin)) || existsSync(`${pluginDir(plugin)}.partial`) || !existsSync(stamp)) return false;
  try {
    return (JSON.parse(readFileSync(stamp, 'utf8')) as { tool: string }).tool === toolStamp(plugin);
  } catch {
    return false;
  }
}

const label = (plugin: PulumiPlugin) => `${plugin.kind} ${plugin.name} ${plugin.version}`;

/** One line per plugin saying what Pulumi will run, without changing anything (for start-up logs). */
export function describePulumiPlugins(): string[] {
  return PULUMI_PLUGINS.map((plugin) => `${label(plugin)}: ${isPluginCurrent(plugin) ? pluginBinary(plugin) : 'NOT INSTALLED (run npm run tools)'}`);
}

/**
 * Installs each plugin whose copy is missing or older than its tool's build; one line per plugin for the progress
 * output. First removes what earlier versions of Kiln installed in place of a plugin it could not build (a folder
 * with kiln-standin.json): its launcher runs a program this checkout no longer has.
 */
export async function ensurePulumiPlugins(): Promise<string[]> {
  const lines: string[] = [];
  const plugins = join(pulumiHome, 'plugins');
  for (const entry of await readdir(plugins).catch(() => [] as string[])) {
    if (!existsSync(join(plugins, entry, 'kiln-standin.json'))) continue;
    await rm(join(plugins, entry), { recursive: true, force: true });
    await rm(join(plugins, `${entry}.lock`), { force: true });
    lines.push(`${entry}: removed (a stand-in of an earlier Kiln)`);
  }
  for (const plugin of PULUMI_PLUGINS) {
    if (isPluginCurrent(plugin)) {
      lines.push(`${label(plugin)}: installed`);
      continue;
    }
    const args = ['plugin', 'install', plugin.kind, plugin.name, plugin.version, '--file', builtPlugin(plugin), '--reinstall'];
    await run(binaryPath('pulumi'), args, { env: { ...process.env, ...pulumiEnv() } }).catch((e: { stderr?: string; message: string }) => {
      throw new ToolError(`pulumi plugin ${plugin.name}`, e.stderr || e.message);
    });
    await writeFile(join(pluginDir(plugin), STAMP), `${JSON.stringify({ tool: toolStamp(plugin), installedAt: new Date().toISOString() }, null, 2)}\n`);
    lines.push(`${label(plugin)}: installed into ${pluginDir(plugin)}`);
  }
  return lines;
}
