// The deployment commands: list and show, deploy and apply, scale, stop, start, restart, delete, logs.
import type { Command } from 'commander';
import { confirm } from '@inquirer/prompts';
import { ok, serverSentEvents, type components } from '../../sdk/client.ts';
import { differs, readDeploymentFile } from '../deployment-file.ts';
import { usage } from '../errors.ts';
import { printReady, waitForDeployment } from '../follow.ts';
import { interactive } from '../input.ts';
import { EXAMPLES, integer, repeat } from '../options.ts';
import { note, paint, printData, printList, printObject, type Column } from '../output.ts';
import { session, type Deployment } from '../session.ts';

/** The fields `kiln ls --json` gives: the API reference's listing fields, and what names a deployment. */
export const LISTING_FIELDS = ['id', 'name', 'model', 'status', 'state', 'currentReplicas', 'maxReplicas', 'gpuType', 'createdAt'] as const;
const listing = (d: Deployment) => Object.fromEntries(LISTING_FIELDS.map((f) => [f, d[f]]));

const STATE_STYLE: Record<string, Parameters<typeof paint>[0]> = { HEALTHY: 'green', SCALING: 'yellow', PENDING: 'yellow', FAILED: 'red', IDLE: 'cyan', STOPPED: 'dim', DELETING: 'dim', DELETED: 'dim' };
const DEPLOYMENT_COLUMNS: Column<Deployment>[] = [
  { header: 'ID', value: (d) => d.id },
  { header: 'NAME', value: (d) => d.name },
  { header: 'MODEL', value: (d) => d.model },
  { header: 'GPU', value: (d) => d.gpuType },
  // Running now over what is wanted: the count asked for, or the bounds the autoscaler keeps it within (a count
  // asked for there is only where it starts: the autoscaler moves it).
  { header: 'RUNNING/WANTED', value: (d) => `${d.currentReplicas}/${d.minReplicas === d.maxReplicas ? d.replicas : `${d.minReplicas}-${d.maxReplicas}`}` },
  { header: 'STATE', value: (d) => paint(STATE_STYLE[d.state] ?? 'reset', d.state) },
  { header: 'STATUS', value: (d) => d.status },
  { header: 'CREATED', value: (d) => d.createdAt },
];

export function addDeploymentCommands(program: Command): void {
  program.command('ls').alias('ps')
    .description('List your deployments: state, replicas, GPU')
    .addHelpText('after', EXAMPLES(['kiln ls', 'kiln ls --json', 'kiln ls -o yaml']))
    .action(async (_options: unknown, command: Command) => {
      const s = await session(command);
      const all = (await s.deployments()).filter((d) => d.status !== 'deleted');
      printList(s.format, all, DEPLOYMENT_COLUMNS, all.map(listing));
    });

  program.command('get').argument('<deployment>', 'id (dep_...) or name')
    .description('Show one deployment in full')
    .addHelpText('after', EXAMPLES(['kiln get chat', 'kiln get dep_0123456789abcdefghij --json']))
    .action(async (ref: string, _options: unknown, command: Command) => {
      const s = await session(command);
      printObject(s.format, await s.deployment(await s.deploymentId(ref)));
    });

  program.command('deploy').argument('<name>', 'the deployment\'s name (a DNS label: lower-case letters, digits, hyphens)')
    .description('Deploy a model (from flags or a template) and follow it until it runs')
    .option('-m, --model <model>', 'Hugging Face id (org/name), hf://, s3:// or gs:// reference')
    .option('-g, --gpu <type>', 'GPU type, e.g. nvidia-l4 (GET /v1/gpu-types lists them)')
    .option('-t, --template <id>', 'deploy a template (`kiln templates` lists them) instead of --model/--gpu')
    .option('--template-version <n>', 'the template version (default: its latest)', integer(1))
    .option('--replicas <n>', 'replicas to run now', integer(0))
    .option('--min-replicas <n>', 'fewest replicas (0: scale to zero when idle)', integer(0))
    .option('--max-replicas <n>', 'most replicas', integer(1))
    .option('--gpus-per-replica <n>', '1, 2, 4 or 8', integer(1, 8))
    .option('--context-length <n>', 'longest sequence served, tokens', integer(1))
    .option('--vllm-arg <arg>', 'a further vLLM flag (repeatable)', repeat)
    .option('-d, --detach', 'do not wait for it to run')
    .option('--timeout <seconds>', 'how long to wait for it to run', integer(1), 1800)
    .addHelpText('after', EXAMPLES(['kiln deploy chat --model meta-llama/Llama-3.1-8B-Instruct --gpu nvidia-l4', 'kiln deploy chat --template tpl_...', 'kiln deploy chat -m Qwen/Qwen2.5-0.5B-Instruct -g nvidia-l4 --min-replicas 0 --detach']))
    .action(async (name: string, o: { model?: string; gpu?: string; template?: string; templateVersion?: number; replicas?: number; minReplicas?: number; maxReplicas?: number; gpusPerReplica?: number; contextLength?: number; vllmArg?: string[]; detach?: boolean; timeout: number }, command: Command) => {
      const s = await session(command);
      let id: string;
      if (o.template) {
        if (o.model || o.gpu) throw usage('--template deploys the template\'s model and GPU: leave out --model and --gpu');
        const created = await ok(s.client.POST('/v1/templates/{id}/deploy', { params: { path: { id: o.template } }, body: { name, ...(o.templateVersion ? { version: o.templateVersion } : {}) } }));
        id = created.id;
      } else {
        if (!o.model || !o.gpu) throw usage('deploy needs --model and --gpu (or --template)', 'e.g. `kiln deploy chat --model meta-llama/Llama-3.1-8B-Instruct --gpu nvidia-l4`');
        const body = {
          name, model: o.model, runtime: 'vllm', gpu: o.gpu, replicas: o.replicas, minReplicas: o.minReplicas, maxReplicas: o.maxReplicas,
          gpusPerReplica: o.gpusPerReplica, contextLength: o.contextLength, vllmArgs: o.vllmArg,
        };
        const created = await ok(s.client.POST('/v1/deployments', { body: body as components['schemas']['CreateDeploymentRequest'] }));
        id = created.id;
      }
      note(`Created ${name} (${id}).`);
      if (o.detach) return printObject(s.format, { id, name, follow: `kiln get ${id}` });
      printReady(s, await waitForDeployment(s, id, o.timeout));
    });

  program.command('apply')
    .description('Create or update a deployment from a declarative file; applying the same file again changes nothing')
    .requiredOption('-f, --file <path>', 'the kiln.yaml (- for stdin)')
    .option('-d, --detach', 'do not wait for it to run')
    .option('--timeout <seconds>', 'how long to wait for it to run', integer(1), 1800)
    .addHelpText('after', `${EXAMPLES(['kiln apply -f kiln.yaml'])}\nA kiln.yaml:\n  name: chat\n  model: meta-llama/Llama-3.1-8B-Instruct\n  gpu: nvidia-l4\n  minReplicas: 1\n  maxReplicas: 3\n`)
    .action(async (o: { file: string; detach?: boolean; timeout: number }, command: Command) => {
      const s = await session(command);
      const file = await readDeploymentFile(o.file);
      const existing = (await s.deployments()).find((d) => d.name === file.name && d.status !== 'deleted' && d.status !== 'deleting');
      let id: string;
      if (!existing) {
        const created = await ok(s.client.POST('/v1/deployments', { body: { runtime: 'vllm', ...file } as components['schemas']['CreateDeploymentRequest'] }));
        id = created.id;
        note(`Created ${file.name} (${id}).`);
      } else {
        id = existing.id;
        const current = await s.deployment(id);
        const changes = Object.fromEntries(Object.entries(file).filter(([key, value]) => key !== 'name' && key !== 'runtime' && differs(key, value, current)));
        if (!Object.keys(changes).length) {
          note(`${file.name} (${id}) unchanged.`);
          if (s.format !== 'table') printData(s.format, { id, name: file.name, result: 'unchanged' });
          return;
        }
        await ok(s.client.PATCH('/api/deployments/{id}', { params: { path: { id } }, body: changes as components['schemas']['UpdateDeploymentRequest'] }));
        note(`Updated ${file.name} (${id}): ${Object.keys(changes).join(', ')}.`);
      }
      if (o.detach) return;
      printReady(s, await waitForDeployment(s, id, o.timeout));
    });

  program.command('scale').argument('<deployment>', 'id or name').argument('<replicas>', 'replicas to run', integer(0))
    .description('Run this many replicas now')
    .addHelpText('after', EXAMPLES(['kiln scale chat 3']))
    .action(async (ref: string, replicas: number, _options: unknown, command: Command) => {
      const s = await session(command);
      const id = await s.deploymentId(ref);
      const d = await ok(s.client.POST('/v1/deployments/{id}/actions', { params: { path: { id } }, body: { action: 'scale', replicas } }));
      if (s.format === 'table') {
        note(`${d.name}: scaling to ${replicas} replica${replicas === 1 ? '' : 's'} (${d.status}).`);
        for (const notice of d.notices) note(notice);
      } else printData(s.format, d);
    });

  for (const [action, says] of [['stop', 'Stop a deployment (its replicas go; its configuration stays)'], ['start', 'Start a stopped deployment'], ['restart', 'Restart a deployment\'s replicas']] as const) {
    program.command(action).argument('<deployment>', 'id or name')
      .description(says)
      .addHelpText('after', EXAMPLES([`kiln ${action} chat`]))
      .action(async (ref: string, _options: unknown, command: Command) => {
        const s = await session(command);
        const id = await s.deploymentId(ref);
        const d = await ok(s.client.POST('/v1/deployments/{id}/actions', { params: { path: { id } }, body: { action } }));
        if (s.format === 'table') note(`${d.name}: ${action} requested (${d.status}).`);
        else printData(s.format, d);
      });
  }

  program.command('delete').alias('rm').argument('<deployment>', 'id or name')
    .description('Delete a deployment (asks first unless --yes)')
    .option('-y, --yes', 'do not ask')
    .addHelpText('after', EXAMPLES(['kiln delete chat', 'kiln delete chat --yes']))
    .action(async (ref: string, o: { yes?: boolean }, command: Command) => {
      const s = await session(command);
      if (!o.yes && !interactive()) throw usage('delete asks before deleting, and there is no terminal to ask on', 'Add --yes to delete without asking.');
      const id = await s.deploymentId(ref);
      if (!o.yes && !(await confirm({ message: `Delete ${ref} (${id})? Its endpoint stops answering.`, default: false }))) {
        note('Nothing deleted.');
        return;
      }
      const d = await ok(s.client.DELETE('/api/deployments/{id}', { params: { path: { id } } }));
      if (s.format === 'table') note(`${ref} (${id}): ${d.data.status}.`);
      else printData(s.format, d.data);
    });

  program.command('logs').argument('<deployment>', 'id or name')
    .description('A deployment\'s logs (vLLM\'s lines and its access log); -f follows new lines')
    .option('-f, --follow', 'keep printing new lines')
    .option('--tail <n>', 'the newest lines to show first', integer(1, 10_000), 100)
    .option('--since <time>', 'only lines at or after this ISO 8601 time')
    .option('--pod <name>', 'one pod\'s lines')
    .addHelpText('after', EXAMPLES(['kiln logs chat', 'kiln logs -f chat --tail 20']))
    .action(async (ref: string, o: { follow?: boolean; tail: number; since?: string; pod?: string }, command: Command) => {
      const s = await session(command);
      const id = await s.deploymentId(ref);
      const query = { orgId: s.orgId, tail: o.tail, ...(o.since ? { since: o.since } : {}), ...(o.pod ? { pod: o.pod } : {}) };
      const show = (l: { pod: string; line: string; time: string }) => process.stdout.write(s.format === 'table' ? `${paint('dim', l.pod)} ${l.line}\n` : JSON.stringify(l) + '\n');
      if (!o.follow) {
        // Without follow the answer is JSON (the document lists the event stream beside it).
        const lines = await ok(s.client.GET('/v1/deployments/{id}/logs', { params: { path: { id }, query } })) as components['schemas']['DeploymentLogs'];
        if (s.format === 'table') lines.forEach(show);
        else printData(s.format, lines);
        return;
      }
      const { data: stream } = await s.client.GET('/v1/deployments/{id}/logs', { params: { path: { id }, query: { ...query, follow: 'true' } }, parseAs: 'stream', headers: { accept: 'text/event-stream' } });
      if (!stream) return;
      for await (const event of serverSentEvents(stream)) {
        if (event.event === 'end') break;
        show(JSON.parse(event.data) as { pod: string; line: string; time: string });
      }
    });
}
