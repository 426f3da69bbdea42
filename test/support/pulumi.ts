// Pulumi settings for a test: a file state backend and workspaces in a folder of the test's own.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PulumiSettings } from '../../workflows/pulumi/automation.ts';

export async function testPulumiSettings(prefix: string): Promise<PulumiSettings> {
  const dir = await mkdtemp(join(tmpdir(), `${prefix}-`));
  return { backendUrl: `file://${dir}/state`, passphrase: 'test', workspacesDir: join(dir, 'workspaces') };
}
