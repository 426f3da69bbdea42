// `kiln models search` and `kiln templates`: what there is to deploy.
import { Option, type Command } from 'commander';
import { ok, type components } from '../../sdk/client.ts';
import { EXAMPLES, integer } from '../options.ts';
import { printList } from '../output.ts';
import { session } from '../session.ts';

export function addCatalogCommands(program: Command): void {
  const models = program.command('models').description('The model catalog');
  models.command('search').argument('[text]', 'words in the model\'s id or name')
    .description('Search the model catalog and your organization\'s models')
    .addOption(new Option('--task <task>', 'what the model does').choices(['chat', 'completion', 'embedding']))
    .option('--fits-gpu <type>', 'only models that fit this GPU type')
    .option('--limit <n>', 'at most this many', integer(1, 100), 20)
    .addHelpText('after', EXAMPLES(['kiln models search llama', 'kiln models search --fits-gpu nvidia-l4 --json']))
    .action(async (text: string | undefined, o: { task?: 'chat' | 'completion' | 'embedding'; fitsGpu?: string; limit: number }, command: Command) => {
      const s = await session(command);
      const query = { orgId: s.orgId, limit: o.limit, ...(text ? { q: text } : {}), ...(o.task ? { task: o.task } : {}), ...(o.fitsGpu ? { fitsGpu: o.fitsGpu as components['schemas']['CreateDeploymentRequest']['gpu'] } : {}) };
      const page = await ok(s.client.GET('/v1/models/search', { params: { query } }));
      printList(s.format, page.data, [
        { header: 'ID', value: (m) => m.id }, { header: 'TASK', value: (m) => m.task }, { header: 'PARAMS (B)', value: (m) => m.parametersBillion },
        { header: 'CONTEXT', value: (m) => m.contextLength }, { header: 'SOURCE', value: (m) => m.source },
      ], page.data);
    });

  program.command('templates')
    .description('Deployment templates you can deploy with `kiln deploy <name> --template <id>`')
    .option('--model <model>', 'only templates of this model')
    .addHelpText('after', EXAMPLES(['kiln templates', 'kiln templates --json']))
    .action(async (o: { model?: string }, command: Command) => {
      const s = await session(command);
      const page = await ok(s.client.GET('/v1/templates/deploy', { params: { query: { orgId: s.orgId, limit: 100, ...(o.model ? { model: o.model } : {}) } } }));
      printList(s.format, page.data, [
        { header: 'ID', value: (t) => t.id }, { header: 'NAME', value: (t) => t.name }, { header: 'MODEL', value: (t) => t.configuration.model },
        { header: 'GPU', value: (t) => t.configuration.gpu }, { header: 'SOURCE', value: (t) => t.source }, { header: 'STARS', value: (t) => t.stars },
      ], page.data);
    });
}
