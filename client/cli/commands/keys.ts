// `kiln keys`: the organization's API keys.
import { Option, type Command } from 'commander';
import { ok } from '../../sdk/client.ts';
import { EXAMPLES } from '../options.ts';
import { note, printData, printList } from '../output.ts';
import { session } from '../session.ts';

export function addKeyCommands(program: Command): void {
  const keys = program.command('keys').description('API keys of your organization');
  keys.command('create')
    .description('Create an API key; its value is shown once')
    .requiredOption('--name <name>', 'what the key is for')
    .addOption(new Option('--scope <scope>', 'what it may do').choices(['full_access', 'deployments_only', 'read_only']).default('full_access'))
    .addHelpText('after', EXAMPLES(['kiln keys create --name ci --scope deployments_only']))
    .action(async (o: { name: string; scope: 'full_access' | 'deployments_only' | 'read_only' }, command: Command) => {
      const s = await session(command);
      const key = await ok(s.client.POST('/v1/settings/api-keys', { body: { name: o.name, scope: o.scope } }));
      if (s.format !== 'table') return printData(s.format, { ...key, organizationId: s.orgId });
      process.stdout.write(`${key.key}\n`);
      note(`API key ${key.name} (${key.id}, ${key.scope}) for organization ${s.orgId}. Keep it now: it is not shown again.`);
    });
  keys.command('ls')
    .description('List API keys (never their values)')
    .addHelpText('after', EXAMPLES(['kiln keys ls', 'kiln keys ls --json']))
    .action(async (_options: unknown, command: Command) => {
      const s = await session(command);
      const list = await ok(s.client.GET('/v1/settings/api-keys', { params: { query: { orgId: s.orgId } } }));
      printList(s.format, list, [
        { header: 'ID', value: (k) => k.id }, { header: 'NAME', value: (k) => k.name }, { header: 'SCOPE', value: (k) => k.scope },
        { header: 'PREFIX', value: (k) => k.prefix }, { header: 'CREATED', value: (k) => k.createdAt }, { header: 'LAST USED', value: (k) => k.lastUsedAt },
      ]);
    });
  keys.command('revoke').argument('<id>', 'the key\'s id')
    .description('Revoke an API key: it stops working at once')
    .addHelpText('after', EXAMPLES(['kiln keys revoke key_0123456789abcdefghij']))
    .action(async (id: string, _options: unknown, command: Command) => {
      const s = await session(command);
      const revoked = await ok(s.client.DELETE('/v1/settings/api-keys', { params: { query: { id, orgId: s.orgId } } }));
      if (s.format === 'table') note(`Revoked ${revoked.id}.`);
      else printData(s.format, revoked);
    });
}
