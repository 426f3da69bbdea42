// A stack Kiln creates and configures itself on a file backend (no CLI run) is one the real Pulumi CLI reads
// as its own: its state is what `pulumi stack init` writes, its config and secrets decrypt, and an up uses them.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as pulumi from '@pulumi/pulumi';
import { openStack, runStackOperationHere, upReadingEvents, type PulumiSettings } from '../../workflows/pulumi/automation.ts';
import type { StackConfig } from '../../workflows/pulumi/stack-settings.ts';
import { pulumiSettingsIn, recordCliRuns } from '../support/pulumi.ts';

const PROJECT = 'kiln-files';

async function world(passphrase = 'files-passphrase'): Promise<PulumiSettings & { dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-files-'));
  return { dir, ...pulumiSettingsIn(dir, passphrase) };
}

const workDirOf = (settings: PulumiSettings, stackName: string) => join(settings.workspacesDir, PROJECT, stackName);

/** The real CLI in the stack's workspace folder; answers its stdout. */
async function cli(settings: PulumiSettings, stackName: string, args: string[], passphrase = settings.passphrase): Promise<string> {
  const { stdout } = await promisify(execFile)(join(settings.cliRoot!, 'bin', 'pulumi'), [...args, '--non-interactive'], {
    cwd: workDirOf(settings, stackName),
    env: { ...process.env, PULUMI_HOME: settings.home, PULUMI_BACKEND_URL: settings.backendUrl, PULUMI_CONFIG_PASSPHRASE: passphrase, PULUMI_SKIP_UPDATE_CHECK: 'true' },
  });
  return stdout;
}

const stateOf = async (settings: { dir: string }, stackName: string) =>
  JSON.parse(await readFile(join(settings.dir, 'state', '.pulumi', 'stacks', PROJECT, `${stackName}.json`), 'utf8')) as { checkpoint: { latest: Record<string, unknown> } };

/** A program that outputs its config, the secret one as a secret. */
const echoConfig = async () => {
  const config = new pulumi.Config();
  return { greeting: config.require('greeting'), token: config.requireSecret('token') };
};

const TRICKY = ['plain', 'with "quotes" and \\backslashes\\', 'two\nlines\tand a tab', 'true', '0123', 'a: b # not a comment', 'ünïcødé ✓ \u2028\u0085\u007f', ' padded '];

test('a stack Kiln creates is the one `pulumi stack init` makes, and the CLI reads its config and secrets', async (t) => {
  const settings = await world();
  const config: StackConfig = Object.fromEntries(TRICKY.flatMap((value, i) => [[`${PROJECT}:plain${i}`, { value }], [`${PROJECT}:secret${i}`, { value, secret: true }]]));
  await openStack(settings, { project: PROJECT, stackName: 'made', program: echoConfig, config });

  t.deepEqual(JSON.parse(await cli(settings, 'made', ['stack', 'ls', '--json'])).map((s: { name: string }) => s.name), ['made']);
  const shown = JSON.parse(await cli(settings, 'made', ['config', '--show-secrets', '--json', '--stack', 'made'])) as Record<string, { value: string; secret: boolean }>;
  for (const [key, { value, secret }] of Object.entries(config)) t.deepEqual(shown[key], { value, secret: secret ?? false }, key);

  // The CLI's own new stack, beside it: the same state but for its time and salt.
  await mkdir(workDirOf(settings, 'by-cli'), { recursive: true });
  await writeFile(join(workDirOf(settings, 'by-cli'), 'Pulumi.yaml'), `name: ${PROJECT}\nruntime: nodejs\n`);
  await cli(settings, 'by-cli', ['stack', 'init', '--secrets-provider', 'passphrase', '--stack', 'by-cli']);
  const shape = (state: Awaited<ReturnType<typeof stateOf>>, stackName: string) => {
    const { manifest, secrets_providers: provider } = state.checkpoint.latest as { manifest: { time: string }; secrets_providers: { state: { salt: string } } };
    t.regex(provider.state.salt, /^v1:[\w+/=]+:v1:[\w+/=]+:[\w+/=]+$/);
    t.false(Number.isNaN(Date.parse(manifest.time)));
    return JSON.parse(JSON.stringify(state).replaceAll(manifest.time, 'TIME').replaceAll(provider.state.salt, 'SALT').replaceAll(stackName, 'STACK'));
  };
  t.deepEqual(shape(await stateOf(settings, 'made'), 'made'), shape(await stateOf(settings, 'by-cli'), 'by-cli'));
  // The settings' salt line is the state's.
  const salt = (await stateOf(settings, 'made') as { checkpoint: { latest: { secrets_providers: { state: { salt: string } } } } }).checkpoint.latest.secrets_providers.state.salt;
  t.true((await readFile(join(workDirOf(settings, 'made'), 'Pulumi.made.yaml'), 'utf8')).startsWith(`encryptionsalt: "${salt}"\n`));
});

test('an up of a stack Kiln made uses its config and secret; a new config keeps the stack\'s salt, and a wrong passphrase is refused', async (t) => {
  const settings = await world();
  const open = (greeting: string, token: string, passphrase = settings.passphrase) => openStack({ ...settings, passphrase }, {
    project: PROJECT, stackName: 'configured', program: echoConfig,
    config: { [`${PROJECT}:greeting`]: { value: greeting }, [`${PROJECT}:token`]: { value: token, secret: true } },
  });
  const first = await upReadingEvents(await open('hello', 's3cr3t'), {});
  t.is(first.greeting?.value, 'hello');
  const settingsFile = join(workDirOf(settings, 'configured'), 'Pulumi.configured.yaml');
  const saltLine = (text: string) => /^encryptionsalt: (.+)$/m.exec(text)![1];
  const salt = saltLine(await readFile(settingsFile, 'utf8'));

  // The stack holds a secret now (its token output): a new config must keep the salt it was encrypted under.
  const second = await upReadingEvents(await open('hi again', 'n3w'), {});
  t.is(second.greeting?.value, 'hi again');
  t.is(saltLine(await readFile(settingsFile, 'utf8')), salt);
  t.is(JSON.parse(await cli(settings, 'configured', ['stack', 'output', 'token', '--show-secrets', '--json', '--stack', 'configured'])), 'n3w');

  await t.throwsAsync(open('hello', 'other', 'not-the-passphrase'), { message: /incorrect passphrase/ });
});

test('a stack the CLI made gets its config written by Kiln under the CLI\'s salt', async (t) => {
  const settings = await world();
  await mkdir(workDirOf(settings, 'cli-made'), { recursive: true });
  await writeFile(join(workDirOf(settings, 'cli-made'), 'Pulumi.yaml'), `name: ${PROJECT}\nruntime: nodejs\n`);
  // The backend's layout first, as Kiln leaves it (a backend the CLI made alone has the same meta.yaml).
  await openStack(settings, { project: PROJECT, stackName: 'other', program: echoConfig });
  await cli(settings, 'cli-made', ['stack', 'init', '--secrets-provider', 'passphrase', '--stack', 'cli-made']);
  await openStack(settings, { project: PROJECT, stackName: 'cli-made', program: echoConfig, config: { [`${PROJECT}:token`]: { value: 'from kiln', secret: true } } });
  t.is((await cli(settings, 'cli-made', ['config', 'get', 'token', '--stack', 'cli-made'])).trim(), 'from kiln');
});

// Serial: it counts every CLI run of this process.
test.serial('a new stack\'s up, its config set, runs one CLI process; a refresh one; a destroy, which removes the stack too, one', async (t) => {
  const settings = await world();
  const { ran } = recordCliRuns(t);
  // No secret output: an up reads outputs that hold one with the CLI (events show them masked).
  const program = async () => {
    const config = new pulumi.Config();
    config.requireSecret('token');
    return { greeting: config.require('greeting') };
  };
  const request = { project: PROJECT, stackName: 'counted', program, config: { [`${PROJECT}:greeting`]: { value: 'hello' }, [`${PROJECT}:token`]: { value: 't', secret: true } } };
  const runs = async (operation: 'up' | 'refresh' | 'destroy') => {
    ran.length = 0;
    await runStackOperationHere(settings, request, operation);
    return [...ran];
  };
  t.deepEqual(await runs('up'), ['up --yes']);
  t.deepEqual(await runs('refresh'), ['refresh --skip-preview']);
  t.deepEqual(await runs('destroy'), ['destroy --yes']);
  t.deepEqual(JSON.parse(await cli(settings, 'counted', ['stack', 'ls', '--json'])), []);
  await t.throwsAsync(readFile(join(workDirOf(settings, 'counted'), 'Pulumi.counted.yaml')), { code: 'ENOENT' });
});

// Serial: it counts every CLI run of this process.
test.serial('a preview in a stack made for it runs one CLI process and leaves neither the stack nor its workspace folder', async (t) => {
  const settings = await world();
  const { ran } = recordCliRuns(t);
  const config = { [`${PROJECT}:greeting`]: { value: 'hello' }, [`${PROJECT}:token`]: { value: 't', secret: true } };
  await runStackOperationHere(settings, { project: PROJECT, stackName: 'dry-run', program: echoConfig, ephemeral: true, config }, 'preview');
  t.deepEqual(ran.map((run) => run.split(' ')[0]), ['preview']);
  await t.throwsAsync(readFile(join(settings.dir, 'state', '.pulumi', 'stacks', PROJECT, 'dry-run.json')), { code: 'ENOENT' });
  await t.throwsAsync(readFile(join(workDirOf(settings, 'dry-run'), 'Pulumi.yaml')), { code: 'ENOENT' });
  // The CLI lists no stack of the project (asked from a folder of the project's own).
  await mkdir(workDirOf(settings, 'lister'), { recursive: true });
  await writeFile(join(workDirOf(settings, 'lister'), 'Pulumi.yaml'), `name: ${PROJECT}\nruntime: nodejs\n`);
  t.deepEqual(JSON.parse(await cli(settings, 'lister', ['stack', 'ls', '--json'])), []);
});
