// `kiln recover`: a failed deployment retried (its stack refreshed first, if asked) or force-deleted.
import { Option, type Command } from 'commander';
import { ok } from '../../sdk/client.ts';
import { printReady, waitForDeployment } from '../follow.ts';
import { EXAMPLES, integer } from '../options.ts';
import { note } from '../output.ts';
import { session } from '../session.ts';

export function addRecoverCommand(program: Command): void {
  program.command('recover').argument('<deployment>', 'id or name')
    .description('Retry a failed deployment (or refresh its stack first, or force-delete it)')
    .addOption(new Option('--action <action>', 'what to do').choices(['retry', 'refresh_and_retry', 'force_delete']).default('retry'))
    .option('-d, --detach', 'do not wait for it to run')
    .option('--timeout <seconds>', 'how long to wait for it to run', integer(1), 1800)
    .addHelpText('after', EXAMPLES(['kiln recover chat', 'kiln recover chat --action refresh_and_retry']))
    .action(async (ref: string, o: { action: 'retry' | 'refresh_and_retry' | 'force_delete'; detach?: boolean; timeout: number }, command: Command) => {
      const s = await session(command);
      const id = await s.deploymentId(ref);
      const d = await ok(s.client.POST('/v1/recovery/deployments/{id}', { params: { path: { id } }, body: { action: o.action } }));
      note(`${d.name}: ${o.action} requested (${d.status}).`);
      if (o.detach || o.action === 'force_delete') return;
      printReady(s, await waitForDeployment(s, id, o.timeout, d.updatedAt));
    });
}
