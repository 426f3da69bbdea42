// The `kiln` command line end to end, as a person uses it: logged in with an API key, `kiln deploy` follows
// a deployment on the local GPU cluster until it runs and prints its endpoint and a sample call; ls shows it
// HEALTHY, logs shows the model server's lines, `kiln chat -m` streams an answer through inference, and
// `kiln chat` in a real terminal (tmux) holds a conversation typed at its prompt; then delete.
import anyTest, { type TestFn } from 'ava';
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '../support/eventually.ts';
import { newTenant, startKiln, type Kiln } from '../support/kiln.ts';
import { cliUser, type Cli } from '../cli/support.ts';

const exec = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

interface Context { kiln: Kiln; cli: Cli }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const kiln = await startKiln(import.meta.filename, { nodePools: [{ gpuType: 'nvidia-l4', nodes: 1, gpusPerNode: 1 }] });
  t.context = { kiln } as Context; // stopped by the after hook even if the rest of this set-up fails
  const tenant = await newTenant(kiln, 'cli', 'full_access');
  const cli = await cliUser(kiln.url());
  const login = await cli.run(['login', '--api-key-stdin', '--org', tenant.organizationId], { input: tenant.key });
  if (login.code !== 0) throw new Error(`login: ${login.stderr}`);
  t.context = { kiln, cli };
});
test.after.always(async (t) => {
  await t.context.kiln?.stop();
});

test.serial('deploy follows the lifecycle to running and ends with the endpoint and a sample call', async (t) => {
  const { cli } = t.context;
  const deploy = await cli.run(['deploy', 'chat', '--model', 'meta-llama/Llama-3.1-8B-Instruct', '--gpu', 'nvidia-l4', '--timeout', '300']);
  t.is(deploy.code, 0, deploy.stderr);
  t.regex(deploy.stderr, /Created chat \(dep_\w+\)/);
  t.regex(deploy.stderr, /chat: (pending|deploying) \(PENDING/, 'the lifecycle as it went');
  t.regex(deploy.stderr, /chat: running \(HEALTHY, 1\/\d+ replicas\)/);
  t.regex(deploy.stdout, /Endpoint: https?:\/\//);
  t.regex(deploy.stdout, /curl .*\/v1\/inference/);
  t.regex(deploy.stdout, /"deployment":"dep_\w+"/);

  const ls = await cli.run(['ls', '--json']);
  const [row] = JSON.parse(ls.stdout) as Record<string, unknown>[];
  t.like(row, { name: 'chat', status: 'running', state: 'HEALTHY', currentReplicas: 1, gpuType: 'nvidia-l4' });
});

test.serial('chat -m streams an answer through inference; logs shows the model server\'s lines', async (t) => {
  const { cli } = t.context;
  const chat = await cli.run(['chat', 'chat', '-m', 'Say hello', '--max-tokens', '16']);
  t.is(chat.code, 0, chat.stderr);
  t.true(chat.stdout.trim().length > 0, 'tokens were printed');
  const logs = await eventually('the access line of the chat', async () => {
    const run = await cli.run(['logs', 'chat', '--tail', '200']);
    return run.code === 0 && /POST \/v1\/chat\/completions/.test(run.stdout) ? run : undefined;
  }, 30_000);
  t.regex(logs.stdout, /vLLM API server version/);
});

test.serial('logs -f prints new lines as the model server writes them', async (t) => {
  const { cli, kiln } = t.context;
  const follower = spawn(join(ROOT, 'node_modules/node/bin/node'), [join(ROOT, 'cli/kiln.js'), 'logs', '-f', 'chat', '--tail', '1'], {
    env: { ...process.env, XDG_CONFIG_HOME: cli.home, HOME: cli.home, KILN_SERVER: kiln.url() }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => { follower.kill(); });
  let out = '';
  follower.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
  await eventually('the newest line', async () => (out.trim() ? true : undefined), 20_000);
  const before = out.length;
  const chat = await cli.run(['chat', 'chat', '-m', 'Followed?', '--max-tokens', '4']);
  t.is(chat.code, 0, chat.stderr);
  await eventually('the chat\'s access line, followed', async () => (/POST \/v1\/chat\/completions/.test(out.slice(before)) ? true : undefined), 30_000);
  t.pass();
});

test.serial('kiln chat in a real terminal: a person types at the prompt and the answer appears', async (t) => {
  const { cli, kiln } = t.context;
  const session = `kiln-chat-${process.pid}`;
  const tmux = (...args: string[]) => exec('tmux', args);
  const env = `XDG_CONFIG_HOME=${cli.home} HOME=${cli.home} KILN_SERVER=${kiln.url()}`;
  await tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '30', `env ${env} ${join(ROOT, 'node_modules/node/bin/node')} ${join(ROOT, 'cli/kiln.js')} chat chat --max-tokens 12; echo "exited $?"; sleep 60`);
  t.teardown(() => tmux('kill-session', '-t', session).catch(() => undefined));
  const screen = async () => (await tmux('capture-pane', '-p', '-t', session)).stdout;
  await eventually('the prompt', async () => (/^you>\s*$/m.test(await screen()) ? true : undefined), 20_000);
  t.regex(await screen(), /Chatting with chat/);
  await tmux('send-keys', '-t', session, 'Tell me about kilns', 'Enter');
  const answered = await eventually('an answer and the next prompt', async () => {
    const text = await screen();
    const lines = text.split('\n').map((l) => l.trimEnd()).filter(Boolean);
    const asked = lines.findIndex((l) => l.includes('you> Tell me about kilns'));
    return asked >= 0 && lines.length > asked + 2 && lines.at(-1) === 'you>' ? lines.slice(asked + 1, -1) : undefined;
  }, 30_000);
  t.true(answered.join('').trim().length > 0, 'the streamed answer is on the screen');
  await tmux('send-keys', '-t', session, 'Enter');
  await eventually('the chat ends on an empty line', async () => (/exited 0/.test(await screen()) ? true : undefined), 10_000);
});

test.serial('delete --yes removes it', async (t) => {
  const { cli } = t.context;
  const deleted = await cli.run(['delete', 'chat', '--yes']);
  t.is(deleted.code, 0, deleted.stderr);
  await eventually('gone from ls', async () => {
    const ls = await cli.run(['ls', '--json']);
    return (JSON.parse(ls.stdout) as unknown[]).length === 0 ? true : undefined;
  }, 120_000);
  t.pass();
});
