// The README's examples, run as written: the walk-through "From sign-up to a deployment" is handed to bash
// whole against a Kiln with a worker and the local GPU cluster, only its first line (API=...) pointed at this
// Kiln. Every curl in it must be answered 2xx, and what it says happens does: llama-chat runs and answers,
// and sleepy, created at zero, is woken by its first request.
import anyTest, { type TestFn } from 'ava';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from '../support/eventually.ts';
import { startKiln, type Kiln } from '../support/kiln.ts';

const exec = promisify(execFile);
const README = new URL('../../README.md', import.meta.url);

const test = anyTest as TestFn<{ kiln: Kiln }>;
test.before(async (t) => {
  t.context = { kiln: await startKiln(import.meta.filename, { nodePools: [{ gpuType: 'nvidia-l4', nodes: 2, gpusPerNode: 1 }] }) };
});
test.after.always(async (t) => {
  await t.context.kiln?.stop();
});

/** The first ```sh block after the heading `heading` in the README. */
async function shellBlock(heading: string): Promise<string> {
  const readme = await readFile(README, 'utf8');
  const at = readme.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`README.md has no section "${heading}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!block) throw new Error(`README.md's "${heading}" has no sh block`);
  return block[1]!;
}

/**
 * A directory whose `curl` is the real one that also writes each answer's status to stderr, so the script's
 * output stays as the README shows it and the test still sees every call.
 */
async function recordingCurl(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-readme-'));
  const { stdout } = await exec('bash', ['-c', 'command -v curl']).catch(() => ({ stdout: '' }));
  if (!stdout.trim()) throw new Error('curl is not installed: the README\'s examples use it (apt-get install curl)');
  await writeFile(join(dir, 'curl'), `#!/bin/sh\nexec ${stdout.trim()} --write-out '%{stderr}ANSWERED %{http_code} %{method} %{url_effective}\\n' "$@"\n`);
  await chmod(join(dir, 'curl'), 0o755);
  return dir;
}

test('the walk-through "From sign-up to a deployment" runs as written, every call answered 2xx', async (t) => {
  const { kiln } = t.context;
  const script = await shellBlock('### From sign-up to a deployment');
  const apiLine = 'API=http://127.0.0.1:8080\n';
  t.true(script.startsWith(apiLine), 'the walk-through starts by naming the API it calls');
  const curlDir = await recordingCurl();
  const run = await exec('bash', ['-e', '-o', 'pipefail', '-c', `API=${kiln.url()}\n${script.slice(apiLine.length)}`], {
    env: { ...process.env, PATH: `${curlDir}:${process.env.PATH}` }, timeout: 300_000, maxBuffer: 16 * 1024 * 1024,
  });
  const answers = run.stderr.split('\n').filter((l) => l.startsWith('ANSWERED ')).map((l) => l.slice('ANSWERED '.length));
  // The script's curl commands (the waiting loop's repeats aside) were all made.
  const written = script.split('\n').filter((l) => /^(\S+=\$\()?(until )?curl /.test(l)).length;
  t.true(answers.length >= written, `${answers.length} calls answered, ${written} written:\n${answers.join('\n')}`);
  for (const answer of answers) t.regex(answer, /^2\d\d /, `every call answered 2xx:\n${answers.join('\n')}`);

  // What the steps say happened did.
  t.regex(run.stdout, /"object":"chat.completion"/, 'llama-chat answered');
  const session = await kiln.request('POST', '/api/auth/login', { body: { email: 'ada@example.com', password: 'correct horse battery' } });
  const token = session.body.data.access_token as string;
  const statusOf = async (name: string) => {
    const { body } = await kiln.request('GET', '/api/deployments?limit=10', { token });
    const found = (body.data as { name: string; status: string; currentReplicas: number }[]).find((d) => d.name === name);
    return found && { status: found.status, currentReplicas: found.currentReplicas };
  };
  t.deepEqual(await statusOf('llama-chat'), { status: 'running', currentReplicas: 1 });
  // Its first request was answered once a replica was up; the status follows when the workflow records it.
  await eventually('sleepy running', async () => ((await statusOf('sleepy'))?.status === 'running' ? true : undefined), 60_000);
  t.deepEqual(await statusOf('sleepy'), { status: 'running', currentReplicas: 1 }, 'its first request woke it');
});
