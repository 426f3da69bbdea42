// Provider plugins for the Pulumi CLI, so Pulumi never tries to download one. A plugin that is installed
// for real is used as it is. Otherwise Kiln installs its stand-in: a launcher script (absolute paths to this
// checkout's Node and stand-in program) given to `pulumi plugin install --file`, which copies it into the
// plugin folder as `pulumi-resource-<name>`; a marker file beside it (kiln-standin.json) tells a stand-in
// from the real plugin and records the checkout, so a clone elsewhere, or a changed launcher, reinstalls it
// and `pulumi plugin install --reinstall` of the real plugin replaces it.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ToolError } from './build.ts';
import { binaryPath, pulumiHome } from './paths.ts';
import { PULUMI_PLUGINS } from './versions.ts';

const run = promisify(execFile);

/** Root of the checkout this code runs from. */
export const checkoutDir = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

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

/** Written by Kiln into a plugin folder holding its stand-in. */
export interface StandinMarker {
  /** The checkout whose stand-in program the launcher runs. */
  readonly checkout: string;
  /** The stand-in program, from the checkout's root. */
  readonly standin: string;
  readonly node: string;
  readonly installedAt: string;
}

export const STANDIN_MARKER = 'kiln-standin.json';

export type PluginInstallation =
  | { readonly state: 'missing' }
  | { readonly state: 'real'; readonly dir: string }
  /** `current`: made for this checkout and Node, with the launcher this code writes. */
  | { readonly state: 'standin'; readonly dir: string; readonly marker: StandinMarker; readonly current: boolean };

/** The folder Pulumi keeps the plugin in (`resource-kubernetes-v4.34.2`). */
export function pluginDir(plugin: PulumiPlugin): string {
  return join(pulumiHome, 'plugins', `${plugin.kind}-${plugin.name}-v${plugin.version}`);
}

export function pluginBinary(plugin: PulumiPlugin): string {
  return join(pluginDir(plugin), `pulumi-${plugin.kind}-${plugin.name}`);
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** The launcher script: Pulumi runs it as the plugin binary, with the engine's address as argument. */
export function standinLauncher(plugin: PulumiPlugin, checkout = checkoutDir, node = process.execPath): string {
  return [
    '#!/bin/sh',
    `# Kiln's STAND-IN for the Pulumi ${plugin.name} provider plugin ${plugin.version}, not the real pulumi-${plugin.kind}-${plugin.name}.`,
    `# Installed by \`npm run tools\` from ${checkout} (see ${dirname(plugin.standin)}/README.md there).`,
    `exec ${shellQuote(node)} --disable-warning=ExperimentalWarning ${shellQuote(join(checkout, plugin.standin))} "$@"`,
    '',
  ].join('\n');
}

/** What is installed under the plugin's name and version, read from disk. */
export function inspectPlugin(plugin: PulumiPlugin, checkout = checkoutDir, node = process.execPath): PluginInstallation {
  const dir = pluginDir(plugin);
  if (!existsSync(pluginBinary(plugin)) || existsSync(`${dir}.partial`)) return { state: 'missing' };
  const markerPath = join(dir, STANDIN_MARKER);
  if (!existsSync(markerPath)) return { state: 'real', dir };
  let marker: StandinMarker;
  try {
    marker = JSON.parse(readFileSync(markerPath, 'utf8')) as StandinMarker;
  } catch {
    return { state: 'standin', dir, marker: { checkout: '', standin: plugin.standin, node: '', installedAt: '' }, current: false };
  }
  const current = marker.checkout === checkout && readFileSync(pluginBinary(plugin), 'utf8') === standinLauncher(plugin, checkout, node);
  return { state: 'standin', dir, marker, current };
}

const label = (plugin: PulumiPlugin) => `${plugin.kind} ${plugin.name} ${plugin.version}`;
const standinLabel = (plugin: PulumiPlugin) => `stand-in (${dirname(plugin.standin)})`;

/** One line per plugin saying which one Pulumi will run, without changing anything (e.g. for start-up logs). */
export function describePulumiPlugins(): string[] {
  return PULUMI_PLUGINS.map((plugin) => {
    const installed = inspectPlugin(plugin);
    if (installed.state === 'real') return `${label(plugin)}: real plugin (${installed.dir})`;
    if (installed.state === 'missing') return `${label(plugin)}: NOT INSTALLED (run npm run tools)`;
    return `${label(plugin)}: ${standinLabel(plugin)}${installed.current ? '' : `, installed from another checkout (${installed.marker.checkout}); npm run tools reinstalls it`}`;
  });
}

/** Installs each stand-in where needed; answers with one line per plugin for the progress output. */
export async function ensurePulumiPlugins(): Promise<string[]> {
  const lines: string[] = [];
  for (const plugin of PULUMI_PLUGINS) {
    const installed = inspectPlugin(plugin);
    if (installed.state === 'real') {
      lines.push(`${label(plugin)}: real plugin (${installed.dir})`);
      continue;
    }
    if (installed.state === 'standin' && installed.current) {
      lines.push(`${label(plugin)}: ${standinLabel(plugin)}, cached`);
      continue;
    }
    await installStandin(plugin);
    lines.push(`${label(plugin)}: ${standinLabel(plugin)}, installed`);
  }
  return lines;
}

async function installStandin(plugin: PulumiPlugin): Promise<void> {
  // A stale stand-in, or a folder left by an interrupted install, is replaced.
  const reinstall = existsSync(pluginDir(plugin));
  const staging = await mkdtemp(join(tmpdir(), 'kiln-plugin-'));
  try {
    const launcher = join(staging, `pulumi-${plugin.kind}-${plugin.name}`);
    await writeFile(launcher, standinLauncher(plugin));
    await chmod(launcher, 0o755);
    const args = ['plugin', 'install', plugin.kind, plugin.name, plugin.version, '--file', launcher, ...(reinstall ? ['--reinstall'] : [])];
    await run(binaryPath('pulumi'), args, { env: { ...process.env, ...pulumiEnv() } }).catch((e: { stderr?: string; message: string }) => {
      throw new ToolError(`pulumi plugin ${plugin.name}`, e.stderr || e.message);
    });
    const marker: StandinMarker = { checkout: checkoutDir, standin: plugin.standin, node: process.execPath, installedAt: new Date().toISOString() };
    await writeFile(join(pluginDir(plugin), STANDIN_MARKER), `${JSON.stringify(marker, null, 2)}\n`);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
