// Pulumi state in Kiln's PostgreSQL database (the worker's default backend), with the real CLI against the real
// test server: a stack Kiln creates itself there is the CLI's own, updated by it in one run; no secret is in the
// table in plaintext; a dead worker's lock is cleared; kiln_tenant cannot read the table; and
// `npm run pulumi:migrate-state` moves a file backend's stacks there.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import * as pulumi from '@pulumi/pulumi';
import { pulumiStateInDatabase } from '../../control-plane/config.ts';
import { openStack, runStackOperationHere, upReadingEvents, type PulumiSettings } from '../../workflows/pulumi/automation.ts';
import { stateFilesOf } from '../../workflows/pulumi/diy-backend.ts';
import { createTestDatabase } from '../support/database.ts';
import { pulumiSettingsIn, recordCliRuns, TOOLS_PULUMI } from '../support/pulumi.ts';

const PROJECT = 'kiln-pg';
const SECRET = 'pg-s3cr3t-value';

const databaseUrl = await createTestDatabase(import.meta.filename);
const database = new pg.Pool({ connectionString: databaseUrl, max: 2 });
test.after.always(() => database.end());
/** The database's name: the CLI keys each row by the file's path after the URL's path. */
const PREFIX = `${new URL(databaseUrl).pathname.slice(1)}/`;

async function world(): Promise<PulumiSettings> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-pg-'));
  return { ...TOOLS_PULUMI, backendUrl: pulumiStateInDatabase(databaseUrl), passphrase: 'pg-passphrase', workspacesDir: join(dir, 'workspaces') };
}

/**
 * The real CLI in a stack's workspace folder; answers its stdout. Its stack listing reads the stacks 10 at a time,
 * each holding two of its 2 x cores connections: on this machine's two cores it waits forever from four stacks on
 * (Pulumi 3.259), unless told to read as many at a time as there are cores.
 */
async function cli(settings: PulumiSettings, stackName: string, args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(join(settings.cliRoot!, 'bin', 'pulumi'), [...args, '--non-interactive'], {
    cwd: join(settings.workspacesDir, PROJECT, stackName),
    env: { ...process.env, PULUMI_HOME: settings.home, PULUMI_BACKEND_URL: settings.backendUrl, PULUMI_CONFIG_PASSPHRASE: settings.passphrase, PULUMI_SKIP_UPDATE_CHECK: 'true', PULUMI_DIY_BACKEND_PARALLEL: String(availableParallelism()) },
  });
  return stdout;
}

/** Every row of the table, its file decoded. */
async function rows(): Promise<{ key: string; raw: string; file: string }[]> {
  const { rows: found } = await database.query<{ key: string; raw: string }>('select key, data::text as raw from pulumi_state order by key');
  return found.map(({ key, raw }) => ({ key, raw, file: Buffer.from((JSON.parse(raw) as { data: string }).data, 'base64').toString() }));
}
const stateOf = async (stackName: string) => JSON.parse((await rows()).find((row) => row.key === `${PREFIX}.pulumi/stacks/${PROJECT}/${stackName}.json`)!.file) as { checkpoint: { latest: Record<string, unknown> } };

/** A program that outputs its config, the secret one as a secret. */
const echoConfig = async () => {
  const config = new pulumi.Config();
  return { greeting: config.require('greeting'), token: config.requireSecret('token') };
};
const configOf = (greeting: string) => ({ [`${PROJECT}:greeting`]: { value: greeting }, [`${PROJECT}:token`]: { value: SECRET, secret: true } });

test.serial('a stack Kiln creates in PostgreSQL is the one `pulumi stack init` makes; its up runs one CLI process, and the CLI lists, reads and updates it', async (t) => {
  const settings = await world();
  // The CLI's version is read once per process, by the first stack opened.
  await openStack(settings, { project: PROJECT, stackName: 'first', program: echoConfig });
  const { ran, stop } = recordCliRuns(t);
  // No secret output here: an up reads outputs that hold one with the CLI (events show them masked).
  const program = async () => ({ greeting: new pulumi.Config().require('greeting') });
  await runStackOperationHere(settings, { project: PROJECT, stackName: 'made', program, config: configOf('hello') }, 'up');
  t.deepEqual(ran, ['up --yes']);
  stop();

  t.deepEqual(JSON.parse(await cli(settings, 'made', ['stack', 'ls', '--json'])).map((s: { name: string }) => s.name).sort(), ['first', 'made']);
  t.deepEqual(JSON.parse(await cli(settings, 'made', ['stack', 'output', '--json', '--stack', 'made'])), { greeting: 'hello' });
  t.is((await cli(settings, 'made', ['config', 'get', 'token', '--stack', 'made'])).trim(), SECRET);
  // The workspace's Pulumi.yaml names the backend without the database's password (PGPASSWORD carries it).
  const projectFile = await readFile(join(settings.workspacesDir, PROJECT, 'made', 'Pulumi.yaml'), 'utf8');
  t.true(projectFile.includes('postgres://kiln@') && !projectFile.includes('kiln:kiln@'), projectFile);

  // The CLI's own new stack, beside it: the same state but for its time and salt.
  await cli(settings, 'made', ['stack', 'init', '--secrets-provider', 'passphrase', '--stack', 'by-cli']);
  await runStackOperationHere(settings, { project: PROJECT, stackName: 'kiln-new', program: async () => ({}) }, 'preview');
  const shape = (state: Awaited<ReturnType<typeof stateOf>>, stackName: string) => {
    const { manifest, secrets_providers: provider } = state.checkpoint.latest as { manifest: { time: string }; secrets_providers: { state: { salt: string } } };
    return JSON.parse(JSON.stringify(state).replaceAll(manifest.time, 'TIME').replaceAll(provider.state.salt, 'SALT').replaceAll(stackName, 'STACK'));
  };
  t.deepEqual(shape(await stateOf('kiln-new'), 'kiln-new'), shape(await stateOf('by-cli'), 'by-cli'));

  // The CLI writes Kiln's stack (its state exported and imported back), and Kiln's up the CLI's.
  const exported = join(settings.workspacesDir, 'made.state.json');
  await writeFile(exported, await cli(settings, 'made', ['stack', 'export', '--stack', 'made']));
  await cli(settings, 'made', ['stack', 'import', '--file', exported, '--stack', 'made']);
  t.true((await rows()).some((row) => row.key === `${PREFIX}.pulumi/stacks/${PROJECT}/made.json.bak`), 'the import backed the state up');
  t.deepEqual(JSON.parse(await cli(settings, 'made', ['stack', 'output', '--json', '--stack', 'made'])), { greeting: 'hello' });
  const second = await upReadingEvents(await openStack(settings, { project: PROJECT, stackName: 'by-cli', program: echoConfig, config: configOf('from kiln') }), {});
  t.is(second.greeting?.value, 'from kiln');
  t.is(JSON.parse(await cli(settings, 'made', ['stack', 'output', 'token', '--show-secrets', '--json', '--stack', 'by-cli'])), SECRET);
});

test.serial('no secret is in the table in plaintext: config and outputs are the passphrase provider\'s ciphertext', async (t) => {
  const settings = await world();
  const outputs = await upReadingEvents(await openStack(settings, { project: PROJECT, stackName: 'secretive', program: echoConfig, config: configOf('hi') }), {});
  t.true(outputs.token?.secret);
  const all = await rows();
  t.true(all.some((row) => row.key.endsWith(`/stacks/${PROJECT}/secretive.json`) && row.file.includes('"4dabf18193072939515e22adb298388d"')), 'the state holds a secret value');
  for (const { key, raw, file } of all) {
    t.false(raw.includes(SECRET), key);
    t.false(file.includes(SECRET), key);
    t.false(file.includes(Buffer.from(SECRET).toString('base64')), key);
  }
});

test('any worker runs any stack: one with a workspace folder of its own updates a stack another worker made, secrets and all', async (t) => {
  // Two workers on two hosts: the same backend and passphrase, no folder in common.
  const [first, second] = [await world(), await world()];
  // As a deployment's program: its values in the program itself, no stack config, a secret among its outputs.
  const inline = { project: PROJECT, stackName: 'shared', program: async () => ({ greeting: 'inline', token: pulumi.secret(SECRET) }) };
  t.deepEqual((await upReadingEvents(await openStack(first, inline), {})).token, { value: SECRET, secret: true });
  const fromSecond = await upReadingEvents(await openStack(second, inline), {});
  t.deepEqual([fromSecond.greeting?.value, fromSecond.token], ['inline', { value: SECRET, secret: true }], 'a folder that never saw the stack');
  // With config now (a secret among it), on a third folder, then back on the first.
  const configured = { ...inline, program: echoConfig };
  const third = await upReadingEvents(await openStack(await world(), { ...configured, config: configOf('from the third') }), {});
  t.deepEqual([third.greeting?.value, third.token?.value], ['from the third', SECRET]);
  const back = await upReadingEvents(await openStack(first, { ...configured, config: configOf('back') }), {});
  t.deepEqual([back.greeting?.value, back.token?.value], ['back', SECRET]);
  t.is((await cli(first, 'shared', ['config', 'get', 'token', '--stack', 'shared'])).trim(), SECRET);
});

test('a lock a killed worker left in the table is cleared by the next operation', async (t) => {
  const settings = await world();
  const request = { project: PROJECT, stackName: 'locked', program: echoConfig, config: configOf('hi') };
  await runStackOperationHere(settings, request, 'up');
  const lock = `.pulumi/locks/organization/${PROJECT}/locked/2b0e8a7c-1111-4e2f-9a55-5a4d6c0e9f00.json`;
  await stateFilesOf(settings.backendUrl)!.write(lock, JSON.stringify({ pid: 4242, username: 'kiln', hostname: 'dead-worker', timestamp: new Date().toISOString() }));
  t.true((await rows()).some((row) => row.key === PREFIX + lock));
  const outputs = await runStackOperationHere(settings, request, 'up');
  t.is(outputs.greeting?.value, 'hi');
  // Its own stack's: the file's other tests run beside it, each holding its stack's lock while it updates.
  t.false((await rows()).some((row) => row.key.includes(`/.pulumi/locks/organization/${PROJECT}/locked/`)));
});

test('a backend naming another table gets it made with the CLI\'s schema by Kiln\'s first write, and the CLI reads the stack there', async (t) => {
  const settings = { ...(await world()), backendUrl: pulumiStateInDatabase(databaseUrl).replace('table=pulumi_state', 'table=kiln_other_state') };
  await openStack(settings, { project: PROJECT, stackName: 'elsewhere', program: echoConfig, config: configOf('there') });
  t.deepEqual(JSON.parse(await cli(settings, 'elsewhere', ['stack', 'ls', '--json'])).map((s: { name: string }) => s.name), ['elsewhere']);
  const { rows: indexes } = await database.query(`select indexname from pg_indexes where tablename = 'kiln_other_state' order by indexname`);
  t.deepEqual(indexes.map((row) => row.indexname), ['kiln_other_state_key_prefix_idx', 'kiln_other_state_pkey']);
});

test('Kiln\'s migrations make the table, and the API\'s tenant role has no grant on it', async (t) => {
  const { rows: [table] } = await database.query(`select to_regclass('pulumi_state') is not null as made, has_table_privilege('kiln_tenant', 'pulumi_state', 'select, insert, update, delete') as tenant`);
  t.deepEqual(table, { made: true, tenant: false });
  const { rows: grants } = await database.query(`select privilege_type from information_schema.role_table_grants where table_name = 'pulumi_state' and grantee = 'kiln_tenant'`);
  t.deepEqual(grants, []);
});

test.serial('npm run pulumi:migrate-state moves a file backend\'s stacks into the table, once; the CLI and Kiln then use them there', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-pg-move-'));
  const files = pulumiSettingsIn(dir, 'pg-passphrase');
  const request = { project: PROJECT, stackName: 'moving', program: echoConfig, config: configOf('on files') };
  await upReadingEvents(await openStack(files, request), {});
  const settings = { ...(await world()), workspacesDir: files.workspacesDir };

  const migrate = async () => (await promisify(execFile)(process.execPath, ['workflows/pulumi/move-state-command.ts', '--from', files.backendUrl], {
    env: { ...process.env, DATA_DIR: dir, DATABASE_URL: databaseUrl, PULUMI_CONFIG_PASSPHRASE: 'pg-passphrase' },
  })).stdout;
  const first = await migrate();
  t.regex(first, new RegExp(`1 stacks moved: ${PROJECT}/moving\\n`));
  t.notRegex(first, /kiln:kiln@/);
  t.regex(await migrate(), /0 stacks moved\n {2}0 files copied .*, \d+ already there/);

  t.true(JSON.parse(await cli(settings, 'moving', ['stack', 'ls', '--json'])).some((s: { name: string }) => s.name === 'moving'));
  t.is(JSON.parse(await cli(settings, 'moving', ['stack', 'output', 'greeting', '--json', '--stack', 'moving'])), 'on files');
  const outputs = await upReadingEvents(await openStack(settings, { ...request, config: configOf('in postgres') }), {});
  t.is(outputs.greeting?.value, 'in postgres');
  // Changed there since, the stack is left as it is by another run.
  t.regex(await migrate(), /left as it is .*: \.pulumi\/stacks\/kiln-pg\/moving\.json/);
});
