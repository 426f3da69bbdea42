// The SDK and the CLI are a package of their own (client/, an npm workspace): packed as `npm pack` packs it and
// installed into an empty project, `kiln` logs in and lists deployments, and a program imports the SDK,
// all from the JavaScript the pack built (Node runs no TypeScript from node_modules), on the Node versions the
// package declares.
import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MINIMUM_NODE_MAJOR } from '../../client/cli/node-version.js';
import { createApiKey, signup, startTestApi, type TestApi } from '../support/control-plane.ts';
import { docBlock } from '../support/doc-blocks.ts';

const exec = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const NODE_BIN = join(ROOT, 'node_modules/node/bin');
/** npm, with the checkout's Node 24 first on the path (as `npm test` runs). */
const npm = (args: string[], cwd: string) => exec('npm', args, { cwd, env: { ...process.env, PATH: `${NODE_BIN}:${process.env.PATH}` }, maxBuffer: 16 << 20 });

let api: TestApi;
let project: string;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
  const packed = await mkdtemp(join(tmpdir(), 'kiln-pack-'));
  await npm(['pack', '--workspace', 'client', '--pack-destination', packed, '--silent'], ROOT);
  project = await mkdtemp(join(tmpdir(), 'kiln-consumer-'));
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // Its dependencies are the checkout's, so npm's cache has them: no download when the registry is slow.
  await npm(['install', '--no-audit', '--no-fund', '--prefer-offline', join(packed, 'kiln-client-0.1.0.tgz')], project);
});
test.after.always(() => api?.close());

function kiln(args: string[], input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${NODE_BIN}:${process.env.PATH}`, HOME: project, XDG_CONFIG_HOME: project, KILN_SERVER: api.url };
  for (const name of ['KILN_API_KEY', 'KILN_PROFILE', 'KILN_ORG']) delete env[name];
  const child = spawn(join(project, 'node_modules/.bin/kiln'), args, { env });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => { out.stdout += String(chunk); });
  child.stderr.on('data', (chunk: Buffer) => { out.stderr += String(chunk); });
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, ...out })));
}

test('the package declares the Node versions its entry point checks', async (t) => {
  const manifest = JSON.parse(await readFile(join(project, 'node_modules/@kiln/client/package.json'), 'utf8')) as { engines: { node: string }; bin: Record<string, string> };
  t.is(manifest.engines.node, `>=${MINIMUM_NODE_MAJOR}`);
  t.deepEqual(manifest.bin, { kiln: 'cli/kiln.js' });
  t.is(process.versions.node.split('.')[0], String(MINIMUM_NODE_MAJOR), 'run on the lowest version it declares');
});

test('installed, kiln logs in with an API key and lists the organization\'s deployments', async (t) => {
  const user = await signup(api, 'packaged');
  const key = await createApiKey(api, user.token, 'full_access');
  t.is((await api.request('POST', '/v1/deployments', { token: user.token, body: { name: 'packaged', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' } })).status, 201);
  const version = await kiln(['--version']);
  t.is(version.code, 0, version.stderr);
  t.is(version.stdout.trim(), '0.1.0');
  const login = await kiln(['login', '--api-key-stdin', '--org', user.organizationId], key.key);
  t.is(login.code, 0, login.stderr);
  t.regex(login.stderr, /Logged in to .* with an API key/);
  const ls = await kiln(['ls', '--json']);
  t.is(ls.code, 0, ls.stderr);
  t.like((JSON.parse(ls.stdout) as unknown[])[0], { name: 'packaged', status: 'pending' });
});

test('installed, a program imports the SDK and calls Kiln with it', async (t) => {
  const user = await signup(api, 'program');
  const key = await createApiKey(api, user.token, 'full_access');
  await writeFile(join(project, 'program.js'), `
    import { createKilnClient, ok } from '@kiln/client';
    const kiln = createKilnClient({ baseUrl: process.argv[2], token: process.argv[3] });
    const gpus = await ok(kiln.GET('/v1/gpu-types', { params: { query: { orgId: process.argv[4] } } }));
    console.log(gpus.map((g) => g.id).join(','));
  `);
  const { stdout } = await exec(join(NODE_BIN, 'node'), [join(project, 'program.js'), api.url, key.key, user.organizationId]);
  t.regex(stdout, /nvidia-l4/);
});

test('installed, the SDK guide\'s example runs as written and reports a missing deployment as KilnError', async (t) => {
  const user = await signup(api, 'readme');
  const key = await createApiKey(api, user.token, 'full_access');
  const example = await docBlock('docs/guides/sdk.md', '# The TypeScript SDK', 'ts');
  const address = "'http://127.0.0.1:8080'";
  t.true(example.includes(address), 'the example names the API it calls');
  // Node strips the types of a .ts file outside node_modules: the example runs as a reader would run it.
  await writeFile(join(project, 'readme-example.ts'), example.replace(address, `'${api.url}'`));
  const { stdout } = await exec(join(NODE_BIN, 'node'), [join(project, 'readme-example.ts')], { env: { ...process.env, KILN_API_KEY: key.key } });
  t.regex(stdout, /^404 DEPLOYMENT_NOT_FOUND /);
  const list = await api.request('GET', '/api/deployments', { token: key.key });
  t.deepEqual((list.body.data as { name: string }[]).map((d) => d.name), ['chat'], 'the example created chat');
});
