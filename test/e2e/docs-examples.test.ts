// The examples of README.md and of the docs site, run as written: every sh block of the README, then of the docs
// pages (the walk-through "From sign-up to a deployment" first, the rest in the sidebar's order), is handed to one
// bash (later blocks use what earlier ones kept: $TOKEN, $KEY, $DEP...), against a Kiln with a worker and the
// local GPU cluster. Only lines that name the reader's own things (the API's address, a kubeconfig, the token in
// a mailed link) are pointed at this Kiln's. Every curl must be answered 2xx and no command may fail, and what the
// text says happens does. The blocks other tests run, or that cannot run here, are listed with where they run and why.
import anyTest, { type TestFn } from 'ava';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../infra/servers/process.ts';
import { eventually } from '../support/eventually.ts';
import { startKiln, type Kiln } from '../support/kiln.ts';
import { blocksOf, docsPages, type DocBlock } from '../support/doc-blocks.ts';

const exec = promisify(execFile);
const METRICS_TOKEN = 'readme-metrics-token-0123456789abcdef';
const WALK_THROUGH = 'docs/guides/first-deployment.md';

/** The code blocks another test runs, or that cannot run inside one, by file and heading: where they run, or why not. */
const RUN_ELSEWHERE = new Map([
  ['README.md ## Two commands', 'they run this test (npm test); test/e2e/start.test.ts runs npm start'],
  ['docs/quick-start.md ## Set up', 'test/e2e/start.test.ts runs npm start'],
  ['docs/operating/pulumi-stacks.md # The Pulumi stacks for enterprises', 'the Pulumi CLI cannot run a Node.js program on this machine (pulumi-language-nodejs is not to be had); test/infra/pulumi-kubernetes.test.ts runs the root program inline, configured as these blocks configure it'],
  ['docs/guides/cli.md # The kiln CLI', 'test/e2e/cli-examples.test.ts'],
  ['docs/guides/sdk.md # The TypeScript SDK', 'test/cli/package.test.ts, against the packed @kiln/client'],
  ['docs/development/tests-and-benches.md ## Running parts of it', 'they are npm test and the benches themselves'],
  ['README.md ## Running at scale', 'a fragment of the program docs/operating/scale.md shows; test/stacks/kiln-on-kubernetes.cluster.test.ts applies the component to the local cluster'],
  ['docs/operating/scale.md ### Kiln\'s image', 'there is no container engine on this machine; test/architecture/image.test.ts checks what the image holds'],
  ['docs/operating/scale.md ### A program with the component', 'it names the reader\'s image, database and Temporal; test/stacks/kiln-on-kubernetes.cluster.test.ts applies the component with arguments of the same kinds to the local cluster'],
  ['docs/operating/scale.md ### Or the root program, configured', 'the Pulumi CLI cannot run a Node.js program on this machine; test/stacks/program.test.ts runs the root program configured as this block configures it'],
  ['docs/operating/backups.md ## Moving file-backend stacks into PostgreSQL', 'they name the reader\'s own folders and database; test/workflows/pulumi-state-postgres.test.ts runs the command from one backend into another'],
]);
const placeOf = (b: DocBlock) => `${b.file} ${b.heading}`;
/** The README's `kiln` lines run in test/e2e/cli-examples.test.ts with every other example of the command line. */
const isCliBlock = (b: DocBlock) => b.file === 'README.md' && b.body.split('\n').some((line) => line.startsWith('npx kiln '));

const test = anyTest as TestFn<{ kiln: Kiln; workerMetricsPort: number }>;
test.before(async (t) => {
  const workerMetricsPort = await freePort();
  const kiln = await startKiln(import.meta.filename, {
    nodePools: [{ gpuType: 'nvidia-l4', nodes: 6, gpusPerNode: 1 }],
    // An administrator for "Platform administration"; mail logged (info), as npm start prints it, for the invitation's link.
    env: { KILN_ADMIN_EMAILS: 'ops@example.com', KILN_METRICS_TOKEN: METRICS_TOKEN, KILN_WORKER_METRICS_PORT: String(workerMetricsPort), LOG_LEVEL: 'info' },
  });
  t.context = { kiln, workerMetricsPort };
});
test.after.always(async (t) => {
  await t.context.kiln?.stop();
});

/**
 * A directory whose `curl` is the real one that also writes each answer's status to stderr, so the script's
 * output stays as the pages show it and the test still sees every call.
 */
async function recordingCurl(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-readme-'));
  const { stdout } = await exec('bash', ['-c', 'command -v curl']).catch(() => ({ stdout: '' }));
  if (!stdout.trim()) throw new Error('curl is not installed: the examples use it (apt-get install curl)');
  await writeFile(join(dir, 'curl'), `#!/bin/sh\nexec ${stdout.trim()} --write-out '%{stderr}ANSWERED %{http_code} %{method} %{url_effective}\\n' "$@"\n`);
  await chmod(join(dir, 'curl'), 0o755);
  return dir;
}

/** Replaces each line that starts with `NAME=` for a NAME in `settings`; every setting must meet one line. */
function pointAt(script: string, settings: Record<string, string>): string {
  const met = new Set<string>();
  const lines = script.split('\n').map((line) => {
    const name = /^([A-Z_]+)=/.exec(line)?.[1];
    if (!name || !(name in settings)) return line;
    met.add(name);
    return `${name}=${settings[name]}`;
  });
  const unmet = Object.keys(settings).filter((name) => !met.has(name));
  if (unmet.length) throw new Error(`the examples no longer set ${unmet.join(', ')}: update this test`);
  return lines.join('\n');
}

test('every README and docs example runs as written: each curl answered 2xx, no command failing, and what the text says happens does', async (t) => {
  const { kiln, workerMetricsPort } = t.context;
  const pages = docsPages();
  t.true(pages.includes(WALK_THROUGH), `the sidebar lists ${WALK_THROUGH}`);
  const blocks = [
    ...await blocksOf('README.md'),
    ...await blocksOf(WALK_THROUGH),
    ...(await Promise.all(pages.filter((p) => p !== WALK_THROUGH).map(blocksOf))).flat(),
  ];
  for (const place of RUN_ELSEWHERE.keys()) t.true(blocks.some((b) => placeOf(b) === place), `"${place}" still has a block`);
  const runnable = blocks.filter((b) => !RUN_ELSEWHERE.has(placeOf(b)) && !isCliBlock(b) && b.language !== 'yaml' && b.language !== 'text');
  for (const block of runnable) t.is(block.language, 'sh', `${placeOf(block)}: a ${block.language} block is run here or listed in RUN_ELSEWHERE`);
  t.is(placeOf(runnable[0]!), 'README.md ## Quick start', 'the README\'s quick start comes first');
  t.is(runnable.find((b) => b.file !== 'README.md')?.file, WALK_THROUGH, 'then the walk-through: the later blocks use what it kept');

  const apiLog = join(kiln.dataDir, 'logs', 'api.log');
  const script = runnable.map((b) => `DOC_BLOCK=${JSON.stringify(placeOf(b))}; echo "BLOCK $DOC_BLOCK" >&2\n${b.body}`).join('\n');
  const pointed = pointAt(script, {
    API: kiln.url(),
    METRICS_TOKEN: METRICS_TOKEN,
    WORKER: `http://127.0.0.1:${workerMetricsPort}`,
    KUBECONFIG_FILE: kiln.cluster.kubeconfig,
    // The link in the mail the API logged (Kiln sends the mail from its outbox within seconds).
    INVITE: `$(timeout 60 bash -c 'until grep -o "invite/invite_[A-Za-z0-9_-]*" ${apiLog} | tail -1 | grep .; do sleep 0.5; done' | cut -d/ -f2)`,
  });
  const curlDir = await recordingCurl();
  const cwd = await mkdtemp(join(tmpdir(), 'kiln-readme-run-'));
  const run = await exec('bash', ['-o', 'pipefail', '-c', `trap 'echo "FAILED $? in $DOC_BLOCK: $BASH_COMMAND" >&2' ERR\n${pointed}`], {
    cwd, env: { ...process.env, PATH: `${curlDir}:${process.env.PATH}` }, timeout: 420_000, maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { message: string; stderr?: string }) => {
    // Timed out (or killed): say which block it was in, and what each call answered until then.
    const progress = (error.stderr ?? '').split('\n').filter((l) => /^(ANSWERED|FAILED|BLOCK) /.test(l)).join('\n');
    throw new Error(`${error.message.split('\n')[0]}\n${progress}`);
  });
  const log = run.stderr.split('\n');
  const shown = `\n${log.filter((l) => /^(ANSWERED|FAILED|BLOCK) /.test(l)).join('\n')}`;

  // Every block ran, every command succeeded (a follow cut short by --max-time ends with curl's 28, as the text says).
  t.deepEqual(log.filter((l) => l.startsWith('BLOCK ')).map((l) => l.slice('BLOCK '.length)), runnable.map(placeOf));
  t.deepEqual(log.filter((l) => l.startsWith('FAILED ') && !/^FAILED 28 .*curl .*--max-time/.test(l)), [], shown);
  // Every curl written was made (waiting loops repeat theirs), and answered 2xx.
  const answers = log.filter((l) => l.startsWith('ANSWERED ')).map((l) => l.slice('ANSWERED '.length));
  const written = runnable.flatMap((b) => b.body.split('\n')).filter((l) => /^(\S+=\$\()?(until )?curl /.test(l)).length;
  t.true(answers.length >= written, `${answers.length} calls answered, ${written} written:${shown}`);
  for (const answer of answers) t.regex(answer, /^2\d\d /, `every call answered 2xx:${shown}`);
  // GraphQL answers 200 with its errors in the body: the only one is the one the GraphQL guide shows (a key reading usage).
  t.deepEqual([...run.stdout.matchAll(/"code":"([A-Z_]+)"/g)].map((m) => m[1]), ['INSUFFICIENT_PERMISSIONS'], 'no other error in any answer');

  // What the steps say happened did.
  // (t.true, not t.regex: a failure should not print the whole output)
  // Every chat request written (the quick start's, llama-chat's, sleepy's once woken...) was answered with a completion.
  const chats = runnable.flatMap((b) => b.body.split('\n')).filter((l) => /-d '\{"deployment":"[^"]+","messages"/.test(l)).length;
  t.true(chats >= 3 && (run.stdout.match(/"object":"chat.completion"/g) ?? []).length === chats, `${chats} chats written, each answered`);
  t.true(/^data: \{.*"text_completion"/m.test(run.stdout), 'a streamed completion');
  t.true(/< \{"type":"ws.ready"/.test(run.stdout), 'the socket opened with a ticket');
  t.regex(await readFile(join(cwd, 'customers.csv'), 'utf8').catch(() => ''), /^org_\w+,Engines,/m, 'the customers report downloaded');
  // The README's quick start deployed chat in Lin's organization, chatted with it, and deleted it.
  const lin = await kiln.request('POST', '/api/auth/login', { body: { email: 'lin@example.com', password: 'correct horse battery' } });
  const linChat = async () => {
    const { body } = await kiln.request('GET', '/api/deployments?limit=20', { token: lin.body.data.access_token as string });
    return (body.data as { name: string; status: string }[]).find((d) => d.name === 'chat');
  };
  await eventually('the quick start\'s chat deleted', async () => {
    const chat = await linChat();
    return chat === undefined || chat.status === 'deleted' ? true : undefined;
  }, 60_000);
  const session = await kiln.request('POST', '/api/auth/login', { body: { email: 'ada@example.com', password: 'correct horse battery' } });
  const token = session.body.data.access_token as string;
  const deployment = async (name: string) => {
    const { body } = await kiln.request('GET', '/api/deployments?limit=20', { token });
    const found = (body.data as { name: string; status: string; replicas: number }[]).find((d) => d.name === name);
    return found && { status: found.status, replicas: found.replicas };
  };
  // GraphQL scaled it past its maximum, which moves the bound: a rolling update, running again once it has rolled out.
  t.like(await eventually('llama-chat running at 2', async () => {
    const scaled = await deployment('llama-chat');
    return scaled?.status === 'running' ? scaled : undefined;
  }, 120_000), { status: 'running', replicas: 2 }, 'GraphQL scaled it to 2');
  // Its first request was answered once a replica was up; the status follows when the workflow records it.
  await eventually('sleepy running', async () => ((await deployment('sleepy'))?.status === 'running' ? true : undefined), 60_000);
  for (const name of ['elastic', 'llama', 'team-chat']) t.truthy(await deployment(name), `${name} was created`);
  const members = await kiln.request('GET', '/v1/team/members', { token });
  t.true(JSON.stringify(members.body).includes('grace@example.com'), 'grace accepted the invitation');
  const clusters = await kiln.request('GET', `/v1/onboarding/providers?orgId=${session.body.data.user.organization_id}`, { token });
  t.like((clusters.body as { name: string }[]).find((c) => c.name === 'gpu-east'), { status: 'ready' }, 'gpu-east was onboarded');
});
