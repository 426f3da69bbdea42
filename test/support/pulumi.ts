// Pulumi settings for a test: the CLI and plugins of Kiln's tools cache (npm run tools), a file state backend
// and workspaces in a folder of the test's own.
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { pulumiToolsEnv } from '../../infra/tools/paths.ts';
import type { PulumiSettings } from '../../workflows/pulumi/automation.ts';
import type { ExecutionContext } from 'ava';
import { PulumiCommand } from '@pulumi/pulumi/automation/index.js';

/** The CLI and plugin home `npm run tools` installs, as npm start gives them to the worker. */
const { PULUMI_HOME, KILN_PULUMI_CLI_ROOT } = pulumiToolsEnv();
export const TOOLS_PULUMI = { cliRoot: KILN_PULUMI_CLI_ROOT, home: PULUMI_HOME } as const;

export async function testPulumiSettings(prefix: string): Promise<PulumiSettings> {
  return pulumiSettingsIn(await mkdtemp(join(tmpdir(), `${prefix}-`)));
}

export function pulumiSettingsIn(dir: string, passphrase = 'test'): PulumiSettings {
  return { ...TOOLS_PULUMI, backendUrl: `file://${dir}/state`, passphrase, workspacesDir: join(dir, 'workspaces') };
}

/**
 * Records every Pulumi CLI run of this process (as its first two arguments: `up --yes`), for tests that count
 * them: each goes through PulumiCommand's run, internal to the SDK (so untyped). `stop` (or the test's end)
 * puts the SDK back.
 */
export function recordCliRuns(t: ExecutionContext): { ran: string[]; stop(): void } {
  const ran: string[] = [];
  const prototype = PulumiCommand.prototype as unknown as { run(args: string[], ...rest: unknown[]): Promise<unknown> };
  const run = prototype.run;
  prototype.run = function (this: PulumiCommand, args, ...rest) {
    ran.push(args.slice(0, 2).join(' '));
    return run.call(this, args, ...rest);
  };
  const stop = () => { prototype.run = run; };
  t.teardown(stop);
  return { ran, stop };
}

/** Every file of a file state backend, stack files and their backups and history, as one text (to look for a value in clear). */
export async function readStateFiles(settings: PulumiSettings): Promise<string> {
  const root = new URL(settings.backendUrl).pathname;
  const files = (await readdir(root, { recursive: true, withFileTypes: true })).filter((f) => f.isFile());
  const texts = await Promise.all(files.map((f) => readFile(join(f.parentPath, f.name)).then((b) => (f.name.endsWith('.gz') ? gunzipSync(b) : b).toString())));
  return texts.join('\n');
}
