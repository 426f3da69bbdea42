// Registers the provider plugins Kiln built with the Pulumi CLI, so Pulumi never tries to download one.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ToolError } from './build.ts';
import { binaryPath, pulumiHome } from './paths.ts';
import { PULUMI_PLUGINS, TOOLS } from './versions.ts';

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

/** Installs each plugin once; answers with one line per plugin for the progress output. */
export async function ensurePulumiPlugins(): Promise<string[]> {
  const lines: string[] = [];
  for (const plugin of PULUMI_PLUGINS) {
    const version = TOOLS[plugin.tool].version;
    const installed = join(pulumiHome, 'plugins', `${plugin.kind}-${plugin.name}-${version}`);
    if (existsSync(installed) && !existsSync(`${installed}.partial`)) {
      lines.push(`${plugin.kind} ${plugin.name} ${version}: cached`);
      continue;
    }
    await run(binaryPath('pulumi'), ['plugin', 'install', plugin.kind, plugin.name, version, '--file', binaryPath(plugin.tool, plugin.binary)], {
      env: { ...process.env, ...pulumiEnv() },
    }).catch((e: { stderr?: string; message: string }) => {
      throw new ToolError(`pulumi plugin ${plugin.name}`, e.stderr || e.message);
    });
    lines.push(`${plugin.kind} ${plugin.name} ${version}: installed`);
  }
  return lines;
}
