// The `kiln` command line end to end, as a person uses it: every example it prints under `--help`, and every
// line of the command line's guide (docs/guides/cli.md) and of the README's quick start, run as written against a Kiln with a worker and the local GPU
// cluster: by bash, with `kiln` the checkout's CLI and only placeholders (org_..., tpl_..., dep_..., key_...,
// the example server) replaced by real values. deploy follows the lifecycle to running and prints the endpoint,
// logs -f shows lines as the model server writes them, chat streams an answer.
// Those that ask (login, delete, chat) run in a real terminal (tmux), answered as a person would. An example
// added without a way to run it here fails the first test, so none goes untried.
import anyTest, { type TestFn } from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '../support/eventually.ts';
import { startKiln, type Kiln } from '../support/kiln.ts';
import { blocksOf, docBlock } from '../support/doc-blocks.ts';

const exec = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const KILN = `${join(ROOT, 'node_modules/node/bin/node')} ${join(ROOT, 'client/cli/kiln.js')}`;
const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery';
const COMMANDS = ['', 'login', 'logout', 'whoami', 'ls', 'get', 'deploy', 'apply', 'scale', 'stop', 'start', 'restart', 'delete', 'logs', 'chat',
  'models search', 'templates', 'keys create', 'keys ls', 'keys revoke', 'usage', 'recover', 'completion'];

interface Context { kiln: Kiln; home: string; organizationId: string; key: string; ran: Set<string> }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const kiln = await startKiln(import.meta.filename, { nodePools: [{ gpuType: 'nvidia-l4', nodes: 4, gpusPerNode: 1 }] });
  t.context = { kiln } as Context;
  const signup = await kiln.request('POST', '/v1/auth/signup', { body: { email: EMAIL, password: PASSWORD, name: 'Ada', organizationName: 'Engines' } });
  const organizationId = signup.body.user.organization_id as string;
  await kiln.setPlan(organizationId, 'growth');
  const key = await kiln.request('POST', '/v1/settings/api-keys', { token: signup.body.access_token, body: { name: 'examples', scope: 'full_access' } });
  t.context = { kiln, home: await mkdtemp(join(tmpdir(), 'kiln-examples-')), organizationId, key: key.body.key as string, ran: new Set() };
});
test.after.always(async (t) => {
  await t.context.kiln?.stop();
});

/** The shell every example runs in: `kiln` is the checkout's CLI, the user's home and configuration are the test's. */
function prelude(c: Context): string {
  return `export HOME=${c.home} XDG_CONFIG_HOME=${c.home} KILN_SERVER=${c.kiln.url()} KEY='${c.key}'; kiln() { ${KILN} "$@"; }; `;
}

/** `example` with its placeholders replaced by this run's values. */
function filled(c: Context, example: string, values: Record<string, string> = {}): string {
  let line = example.replace('org_...', c.organizationId).replace('https://kiln.example.com', c.kiln.url()).replace('"${fpath[1]}"', join(c.home, 'zsh'));
  for (const [placeholder, value] of Object.entries(values)) line = line.replace(placeholder, value);
  return line;
}

/** Runs an example that asks nothing; answers its exit code and output. */
async function run(c: Context, example: string, values?: Record<string, string>) {
  c.ran.add(example);
  const result = await exec('bash', ['-c', prelude(c) + filled(c, example, values)], { timeout: 300_000, maxBuffer: 8 << 20 })
    .then((r) => ({ code: 0, ...r }), (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }));
  return result;
}

/** Runs an example in a real terminal, answering each prompt (a pattern on screen) with keys; waits for it to end. */
async function inTerminal(c: Context, example: string, answers: readonly (readonly [RegExp, ...string[]])[]) {
  c.ran.add(example);
  const session = `kiln-example-${process.pid}-${c.ran.size}`;
  const tmux = (...args: string[]) => exec('tmux', args);
  await tmux('new-session', '-d', '-s', session, '-x', '160', '-y', '40', 'bash', '-c', `${prelude(c)}${filled(c, example)}; echo "exited $?"; sleep 120`);
  try {
    const screen = async () => (await tmux('capture-pane', '-p', '-t', session)).stdout;
    for (const [prompt, ...keys] of answers) {
      await eventually(`${example}: ${prompt}`, async () => (prompt.test(await screen()) ? true : undefined), 60_000);
      // A prompt is drawn a moment before it reads: keys sent in that moment are lost on a loaded machine.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await tmux('send-keys', '-t', session, ...keys);
    }
    const code = await eventually(`${example} to end`, async () => /exited (\d+)/.exec(await screen())?.[1], 120_000);
    return { code: Number(code), screen: await screen() };
  } finally {
    await tmux('kill-session', '-t', session).catch(() => undefined);
  }
}

/** The examples `kiln <command> --help` prints, every command's. */
async function helpExamples(c: Context): Promise<string[]> {
  const examples = new Set<string>();
  for (const command of COMMANDS) {
    const help = await exec('bash', ['-c', `${prelude(c)}kiln ${command} --help`]);
    for (const line of help.stdout.split('Examples:\n')[1]?.split('\n') ?? []) if (line.startsWith('  $ ')) examples.add(line.slice(4).trim());
  }
  return [...examples];
}

/** The `npx kiln ...` lines of the command line's guide and of the README's quick start, as `kiln ...` without their comments. */
async function documentedLines(): Promise<string[]> {
  const readme = (await blocksOf('README.md')).map((b) => b.body);
  const blocks = [await docBlock('docs/guides/cli.md', '# The kiln CLI'), ...readme];
  return blocks.flatMap((block) => block.split('\n')).filter((l) => l.startsWith('npx kiln ')).map((l) => l.slice('npx '.length).replace(/\s+#.*$/, '').trim());
}

const deploymentId = async (c: Context, name: string) => {
  const ls = await run(c, 'kiln ls --json');
  return (JSON.parse(ls.stdout) as { id: string; name: string }[]).find((d) => d.name === name)?.id;
};

/** The status of a deployment, or undefined once it is gone. */
async function statusOf(c: Context, id: string): Promise<string | undefined> {
  const { status, body } = await c.kiln.request('GET', `/api/deployments/${id}`, { token: c.key });
  return status === 404 || body.data.status === 'deleted' ? undefined : body.data.status as string;
}

/**
 * A real failed rollout named chat: another deployment holds 3 of the 4 L4s, chat's two replicas cannot both
 * be placed and it fails; then the other is deleted, so a retry finds room.
 */
async function failedChatWithGpusFreed(c: Context): Promise<void> {
  const create = async (name: string, replicas: number) => {
    const { status, body } = await c.kiln.request('POST', '/api/deployments', { token: c.key, body: {
      name, model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas, minReplicas: replicas, maxReplicas: replicas,
    } });
    if (status !== 201) throw new Error(`creating ${name}: ${status} ${JSON.stringify(body)}`);
    return body.data.id as string;
  };
  const hog = await create('hog', 3);
  await eventually('hog running', async () => ((await statusOf(c, hog)) === 'running' ? true : undefined), 120_000);
  const chat = await create('chat', 2);
  await eventually('chat failed', async () => ((await statusOf(c, chat)) === 'failed' ? true : undefined), 120_000);
  await c.kiln.request('DELETE', `/api/deployments/${hog}`, { token: c.key });
  await eventually('hog gone', async () => ((await statusOf(c, hog)) === undefined ? true : undefined), 120_000);
}

test.serial('every --help example and documented line is run below, from a login to a logout', async (t) => {
  const c = t.context;
  const examples = [...await helpExamples(c), ...await documentedLines()];
  t.true(examples.length > 40, `${examples.length} examples found`);

  // Log in as a person would: asked how, then the e-mail and the password.
  const login = await inTerminal(c, 'kiln login', [[/Log in with/, 'Enter'], [/E-mail/, EMAIL, 'Enter'], [/Password/, PASSWORD, 'Enter']]);
  t.is(login.code, 0, login.screen);
  t.regex(login.screen, new RegExp(`Logged in to .* as ${EMAIL}`));
  t.is((await inTerminal(c, 'kiln login --email ada@example.com', [[/Password/, PASSWORD, 'Enter']])).code, 0);
  for (const example of ['kiln whoami', 'kiln whoami --json']) {
    const who = await run(c, example);
    t.is(who.code, 0, `${example}: ${who.stderr}`);
    t.true(who.stdout.includes(EMAIL), example);
  }
  for (const example of ['kiln models search llama', 'kiln models search --fits-gpu nvidia-l4 --json', 'kiln templates', 'kiln templates --json', 'kiln usage', 'kiln usage --json']) {
    const answer = await run(c, example);
    t.is(answer.code, 0, `${example}: ${answer.stderr}`);
    t.true(answer.stdout.trim().length > 0, example);
  }

  // The first deployment, and everything done to it.
  const deploy = await run(c, 'kiln deploy chat --model meta-llama/Llama-3.1-8B-Instruct --gpu nvidia-l4');
  t.is(deploy.code, 0, deploy.stderr);
  t.regex(deploy.stderr, /Created chat \(dep_\w+\)/);
  t.regex(deploy.stderr, /chat: (pending|deploying) \(PENDING/, 'the lifecycle as it went');
  t.regex(deploy.stderr, /chat: running \(HEALTHY, 1\/\d+ replicas\)/);
  t.regex(deploy.stdout, /Endpoint: https?:\/\//);
  t.regex(deploy.stdout, /curl .*\/v1\/inference/, 'a sample call');
  const [row] = JSON.parse((await run(c, 'kiln ls --json')).stdout) as Record<string, unknown>[];
  t.like(row, { name: 'chat', status: 'running', state: 'HEALTHY', currentReplicas: 1, gpuType: 'nvidia-l4' });
  const chatId = (await deploymentId(c, 'chat'))!;
  for (const example of ['kiln ls', 'kiln ls --json', 'kiln ls -o yaml', 'kiln get chat', 'kiln get dep_0123456789abcdefghij --json']) {
    const answer = await run(c, example, { dep_0123456789abcdefghij: chatId });
    t.is(answer.code, 0, `${example}: ${answer.stderr}`);
    t.true(answer.stdout.includes('chat'), example);
  }
  const logs = await run(c, 'kiln logs chat');
  t.is(logs.code, 0, logs.stderr);
  t.regex(logs.stdout, /vLLM API server version/);
  // Following, each prints what the model server writes while it runs: the access line of a chat sent meanwhile
  // (the first of this deployment). Stopped as a person would with Ctrl-C (timeout runs the CLI itself: it
  // cannot run a shell function).
  const [withTail, plain] = ['kiln logs -f chat --tail 20', 'kiln logs -f chat'].map((example) => {
    c.ran.add(example);
    return run(c, example.replace(/^kiln /, `timeout -s INT 30 ${KILN} `));
  });
  // The followers attach first (a loaded machine takes seconds), then the chat is sent.
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const haiku = await run(c, 'kiln chat chat -m "Write a haiku about kilns"');
  t.is(haiku.code, 0, haiku.stderr);
  t.true(haiku.stdout.trim().length > 0, 'tokens were printed');
  for (const followed of [await withTail!, await plain!]) {
    t.true(followed.code === 124 || followed.code === 130, `follows until stopped (${followed.code}): ${followed.stderr}`);
    t.regex(followed.stdout, /POST \/v1\/chat\/completions/, 'the chat\'s access line, followed');
  }
  const settled = [['kiln scale chat 2', 'running', 2], ['kiln scale chat 3', 'running', 3], ['kiln stop chat', 'stopped', 0], ['kiln start chat', 'running', 3], ['kiln restart chat', 'running', 3]] as const;
  for (const [example, status, currentReplicas] of settled) {
    const answer = await run(c, example);
    t.is(answer.code, 0, `${example}: ${answer.stderr}`);
    await eventually(`${example}: ${status} with ${currentReplicas}`, async () => {
      const { body } = await c.kiln.request('GET', `/api/deployments/${chatId}`, { token: c.key });
      return body.data.status === status && body.data.currentReplicas === currentReplicas ? true : undefined;
    }, 120_000);
  }
  const conversation = await inTerminal(c, 'kiln chat chat', [[/^you>\s*$/m, 'Tell me about kilns', 'Enter'], [/you> Tell me about kilns\n.*\S[\s\S]*\nyou>\s*$/, 'Enter']]);
  t.is(conversation.code, 0, conversation.screen);

  t.is((await run(c, 'kiln delete chat --yes')).code, 0);
  await eventually('chat deleted', async () => ((await deploymentId(c, 'chat')) ? undefined : true), 120_000);

  // Recovery is for a failed deployment: chat fails for want of GPUs, they are freed, and it is retried.
  for (const example of ['kiln recover chat', 'kiln recover chat --action refresh_and_retry']) {
    await failedChatWithGpusFreed(c);
    const recovered = await run(c, example);
    t.is(recovered.code, 0, `${example}: ${recovered.stderr}`);
    t.regex(recovered.stderr, /chat: running/);
    const asked = await inTerminal(c, 'kiln delete chat', [[/Delete chat/, 'y', 'Enter']]);
    t.is(asked.code, 0, asked.screen);
    await eventually('chat deleted', async () => ((await deploymentId(c, 'chat')) ? undefined : true), 120_000);
  }

  // The other ways to deploy: from a template, at zero without waiting, and from a file.
  const templates = JSON.parse((await run(c, 'kiln templates --json')).stdout) as { id: string; configuration: { gpu: string } }[];
  const template = templates.find((tpl) => tpl.configuration.gpu === 'nvidia-l4')!;
  const fromTemplate = await run(c, 'kiln deploy chat --template tpl_...', { 'tpl_...': template.id });
  t.is(fromTemplate.code, 0, fromTemplate.stderr);
  t.is((await run(c, 'kiln delete chat --yes')).code, 0);
  await eventually('chat deleted again', async () => ((await deploymentId(c, 'chat')) ? undefined : true), 120_000);
  const detached = await run(c, 'kiln deploy chat -m Qwen/Qwen2.5-0.5B-Instruct -g nvidia-l4 --min-replicas 0 --detach');
  t.is(detached.code, 0, detached.stderr);
  await mkdir(join(c.home, 'project'), { recursive: true });
  const help = await exec('bash', ['-c', `${prelude(c)}kiln apply --help`]);
  const yaml = help.stdout.split('A kiln.yaml:\n')[1]!.split('\n').filter((l) => l.startsWith('  ')).map((l) => l.slice(2)).join('\n');
  const applied = await run(c, `cd ${join(c.home, 'project')} && printf '%s\\n' '${yaml}' > kiln.yaml && kiln apply -f kiln.yaml`);
  c.ran.add('kiln apply -f kiln.yaml');
  t.is(applied.code, 0, applied.stderr);

  // Keys.
  t.is((await run(c, 'kiln keys create --name ci --scope deployments_only')).code, 0);
  for (const example of ['kiln keys ls', 'kiln keys ls --json']) t.regex((await run(c, example)).stdout, /ci/, example);
  const keyId = (JSON.parse((await run(c, 'kiln keys ls --json')).stdout) as { id: string; name: string }[]).find((k) => k.name === 'ci')!.id;
  t.is((await run(c, 'kiln keys revoke key_0123456789abcdefghij', { key_0123456789abcdefghij: keyId })).code, 0);

  // A second profile with an API key, then out of both.
  const keyLogin = await run(c, 'echo "$KEY" | kiln login --api-key-stdin --org org_... --server https://kiln.example.com --profile prod');
  t.is(keyLogin.code, 0, keyLogin.stderr);
  t.is((await run(c, 'kiln logout --profile prod')).code, 0);
  t.is((await run(c, 'kiln logout')).code, 0);
  t.is((await run(c, 'kiln whoami')).code, 1, 'logged out');

  // Completion, in each shell's place.
  t.is((await run(c, 'source <(kiln completion bash) && complete -p kiln')).code, 0);
  c.ran.add('source <(kiln completion bash)');
  await mkdir(join(c.home, 'zsh'), { recursive: true });
  await mkdir(join(c.home, '.config/fish/completions'), { recursive: true });
  for (const example of ['kiln completion zsh > "${fpath[1]}/_kiln"', 'kiln completion fish > ~/.config/fish/completions/kiln.fish']) t.is((await run(c, example)).code, 0, example);

  const untried = examples.filter((e) => !c.ran.has(e));
  t.deepEqual(untried, [], 'every example was run');
});
