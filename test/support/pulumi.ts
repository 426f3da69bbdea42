// Pulumi settings for a test: the CLI and plugins of Kiln's tools cache (npm run tools), a file state backend
// and workspaces in a folder of the test's own.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pulumiToolsEnv } from '../../infra/tools/paths.ts';
import type { PulumiSettings } from '../../workflows/pulumi/automation.ts';

/** The CLI and plugin home `npm run tools` installs, as npm start gives them to the worker. */
const { PULUMI_HOME, KILN_PULUMI_CLI_ROOT } = pulumiToolsEnv();
export const TOOLS_PULUMI = { cliRoot: KILN_PULUMI_CLI_ROOT, home: PULUMI_HOME } as const;

export async function testPulumiSettings(prefix: string): Promise<PulumiSettings> {
  return pulumiSettingsIn(await mkdtemp(join(tmpdir(), `${prefix}-`)));
}

export function pulumiSettingsIn(dir: string, passphrase = 'test'): PulumiSettings {
  return { ...TOOLS_PULUMI, backendUrl: `file://${dir}/state`, passphrase, workspacesDir: join(dir, 'workspaces') };
}
