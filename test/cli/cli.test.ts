// The `kiln` command line as a user runs it: a separate process against a real Kiln (the test API, no
// worker: deployments stay pending unless a test moves them), its credentials in its own config directory.
import test from 'ava';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createApiKey, desiredStatesSent, signup, signupWithDeployment, startTestApi, validDeployment, type TestApi } from '../support/control-plane.ts';
import { cliUser } from './support.ts';
import { eventually } from '../support/eventually.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

/** A user who logged in with e-mail and password through the CLI. */
async function loggedIn() {
  const user = await signup(api, 'cli');
  const cli = await cliUser(api.url);
  const login = await cli.run(['login', '--email', user.email, '--password-stdin'], { input: `${user.password}\n` });
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);
  return { user, cli };
}

const setStatus = (id: string, status: string) => api.pool.query('UPDATE deployment SET status = $1 WHERE id = $2', [status, id]);

test('login keeps the credential in the config directory, owner-only, and never prints it', async (t) => {
  const user = await signup(api, 'cli');
  const cli = await cliUser(api.url);
  const login = await cli.run(['login', '--email', user.email, '--password-stdin'], { input: `${user.password}\n` });
  t.is(login.code, 0, login.stderr);
  t.regex(login.stderr, /Logged in to .* as cli-/);
  const file = join(cli.home, 'kiln', 'credentials.yaml');
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.is((await stat(join(cli.home, 'kiln'))).mode & 0o777, 0o700);
  const saved = await readFile(file, 'utf8');
  t.regex(saved, /token: /);
  t.regex(saved, new RegExp(user.organizationId));
  const token = /\n\s+token: (\S+)/.exec(saved)![1]!;
  for (const output of [login.stdout, login.stderr]) {
    t.false(output.includes(token), 'the token is not printed');
    t.false(output.includes(user.password), 'the password is not printed');
  }

  const whoami = await cli.run(['whoami', '--json']);
  t.is(whoami.code, 0, whoami.stderr);
  t.like(JSON.parse(whoami.stdout), { user: user.email, organizationId: user.organizationId, profile: 'default' });

  const logout = await cli.run(['logout']);
  t.is(logout.code, 0);
  const after = await cli.run(['ls']);
  t.is(after.code, 1);
  t.regex(after.stderr, /NOT_LOGGED_IN/);
});

test('an expired session is renewed with its refresh token, and the new tokens are saved', async (t) => {
  const { cli } = await loggedIn();
  const file = join(cli.home, 'kiln', 'credentials.yaml');
  const saved = await readFile(file, 'utf8');
  const [, token] = /\n\s+token: (\S+)/.exec(saved)!;
  // An access token Kiln no longer accepts, as after its hour.
  await writeFile(file, saved.replace(token!, 'expired-access-token'));
  const ls = await cli.run(['ls', '--json']);
  t.is(ls.code, 0, ls.stderr);
  t.deepEqual(JSON.parse(ls.stdout), []);
  const renewed = await readFile(file, 'utf8');
  t.false(renewed.includes('expired-access-token'));
  t.not(/refreshToken: (\S+)/.exec(renewed)![1], /refreshToken: (\S+)/.exec(saved)![1], 'the rotated refresh token is kept');
  t.is((await stat(file)).mode & 0o777, 0o600);
});

test('an API key logs in with its organization, as a profile of its own; a wrong key is refused with Kiln\'s code', async (t) => {
  const user = await signup(api, 'cli');
  const key = await createApiKey(api, user.token, 'read_only');
  const cli = await cliUser(api.url);
  const login = await cli.run(['login', '--api-key-stdin', '--org', user.organizationId, '--profile', 'ci'], { input: key.key });
  t.is(login.code, 0, login.stderr);
  t.false(login.stdout.includes(key.key) || login.stderr.includes(key.key));
  const ls = await cli.run(['ls', '--json', '--profile', 'ci']);
  t.is(ls.code, 0, ls.stderr);
  t.deepEqual(JSON.parse(ls.stdout), []);
  // A second login, to another profile, takes the default: it says so rather than doing it silently.
  const second = await cli.run(['login', '--api-key-stdin', '--org', user.organizationId, '--profile', 'other'], { input: key.key });
  t.regex(second.stderr, /as profile "other"\. It is now the default profile, in place of "ci"/);

  const wrong = await cli.run(['login', '--api-key-stdin', '--org', user.organizationId], { input: 'sk_test_0000000000000000000000000000000x' });
  t.is(wrong.code, 1);
  t.regex(wrong.stderr, /error: .*\(INVALID_API_KEY|UNAUTHORIZED|INVALID_CREDENTIALS/);
  t.regex(wrong.stderr, /hint: /);
});

test('a key scoped to deployments logs in and works though it may not read the organization; a key of another organization is refused', async (t) => {
  const user = await signup(api, 'cli');
  const key = await createApiKey(api, user.token, 'deployments_only');
  const cli = await cliUser(api.url);
  const login = await cli.run(['login', '--api-key-stdin', '--org', user.organizationId], { input: key.key });
  t.is(login.code, 0, login.stderr);
  t.regex(login.stderr, new RegExp(`organization ${user.organizationId}, as profile`));
  const whoami = await cli.run(['whoami', '--json']);
  t.is(whoami.code, 0, whoami.stderr);
  t.like(JSON.parse(whoami.stdout), { user: '(API key)', organizationId: user.organizationId });
  const ls = await cli.run(['ls', '--json']);
  t.is(ls.code, 0, ls.stderr);

  const other = await signup(api, 'cli-other');
  const elsewhere = await (await cliUser(api.url)).run(['login', '--api-key-stdin', '--org', other.organizationId], { input: key.key });
  t.is(elsewhere.code, 1);
  t.regex(elsewhere.stderr, /error: .*\(INSUFFICIENT_PERMISSIONS\)/);
});

test('without a credential a command fails with exit code 1, the code NOT_LOGGED_IN and a hint', async (t) => {
  const cli = await cliUser(api.url);
  const result = await cli.run(['ls']);
  t.is(result.code, 1);
  t.is(result.stdout, '');
  t.regex(result.stderr, /error: No credential for profile "default" \(NOT_LOGGED_IN\)/);
  t.regex(result.stderr, /hint: Run `kiln login`/);
});

test('ls --json gives exactly the listing fields, with the state labels the API reference names', async (t) => {
  const { user, cli } = await loggedIn();
  const ids: Record<string, string> = {};
  for (const [name, status] of [['healthy-one', 'running'], ['scaling-one', 'scaling'], ['pending-one', 'pending']] as const) {
    const created = await api.request('POST', '/v1/deployments', { token: user.token, body: validDeployment(name) });
    ids[name] = created.body.id;
    await setStatus(created.body.id, status);
  }
  // One the autoscaler keeps between 0 and 2 (asked for 0: it starts scaled to zero).
  const elastic = await api.request('POST', '/v1/deployments', { token: user.token, body: { ...validDeployment('elastic-one'), replicas: 0, minReplicas: 0, maxReplicas: 2 } });
  t.is(elastic.status, 201, JSON.stringify(elastic.body));
  await setStatus(elastic.body.id, 'scaled_to_zero');
  const ls = await cli.run(['ls', '--json']);
  t.is(ls.code, 0, ls.stderr);
  const rows = (JSON.parse(ls.stdout) as Record<string, unknown>[]).filter((r) => r.name !== 'elastic-one');
  t.is(rows.length, 3);
  for (const row of rows) {
    t.deepEqual(Object.keys(row).sort(), ['createdAt', 'currentReplicas', 'gpuType', 'id', 'maxReplicas', 'model', 'name', 'state', 'status'], 'exactly these fields');
    t.is(typeof row.currentReplicas, 'number');
    t.is(typeof row.maxReplicas, 'number');
    t.is(row.gpuType, 'nvidia-l4');
    t.false(Number.isNaN(Date.parse(String(row.createdAt))));
  }
  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
  t.like(byName['healthy-one'], { state: 'HEALTHY', status: 'running', id: ids['healthy-one'] });
  t.like(byName['scaling-one'], { state: 'SCALING', status: 'scaling' });
  t.like(byName['pending-one'], { state: 'PENDING', status: 'pending' });

  const yaml = await cli.run(['ls', '-o', 'yaml']);
  t.is(yaml.code, 0);
  t.regex(yaml.stdout, /state: HEALTHY/);
  const table = await cli.run(['ls']);
  t.is(table.code, 0);
  t.regex(table.stdout, /healthy-one.*HEALTHY/);
  // Replicas as running over wanted: none runs yet of the one asked for (the status was set by hand); an
  // autoscaled deployment wants its bounds.
  t.regex(table.stdout, /RUNNING\/WANTED/);
  t.regex(table.stdout, /healthy-one .* 0\/1 /);
  t.regex(table.stdout, /elastic-one .* 0\/0-2 /);
  t.false(table.stdout.includes('\u001b['), 'no colour when not a terminal');
});

test('scale sends the new replica count; get shows it', async (t) => {
  const { user, cli } = await loggedIn();
  const created = await api.request('POST', '/v1/deployments', { token: user.token, body: { ...validDeployment('scaled'), maxReplicas: 4 } });
  const scale = await cli.run(['scale', 'scaled', '3']);
  t.is(scale.code, 0, scale.stderr);
  t.regex(scale.stderr, /scaled: scaling to 3 replicas/);
  const get = await cli.run(['get', created.body.id, '--json']);
  t.is(get.code, 0, get.stderr);
  t.is(JSON.parse(get.stdout).replicas, 3);
  const sent = await desiredStatesSent(api, created.body.id);
  t.is(sent.at(-1)?.replicas, 3);
  // Past the maximum, as `kiln scale --help` shows it on a deployment made without bounds: it runs, and says what moved.
  const beyond = await cli.run(['scale', 'scaled', '6']);
  t.is(beyond.code, 0, beyond.stderr);
  t.regex(beyond.stderr, /scaled: scaling to 6 replicas.*\nmaxReplicas raised from 4 to 6 to run 6 replicas/s);
});

test('stop, start and restart by name each send the new desired state to the deployment\'s workflow', async (t) => {
  const { user, cli } = await loggedIn();
  const created = await api.request('POST', '/v1/deployments', { token: user.token, body: validDeployment('cycled') });
  for (const action of ['stop', 'start', 'restart']) {
    const run = await cli.run([action, 'cycled']);
    t.is(run.code, 0, run.stderr);
    t.regex(run.stderr, new RegExp(`cycled: ${action} requested`));
  }
  const sent = await desiredStatesSent(api, created.body.id);
  t.deepEqual(sent.map(({ running, restarts }) => ({ running, restarts })), [
    { running: true, restarts: 0 }, { running: false, restarts: 0 }, { running: true, restarts: 0 }, { running: true, restarts: 1 },
  ]);
  const unknown = await cli.run(['stop', 'no-such-deployment']);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /no-such-deployment/);
});

test('deploy --template creates the template\'s model on its GPU; --model beside it is a usage error', async (t) => {
  const { user, cli } = await loggedIn();
  const listed = await cli.run(['templates', '--json']);
  t.is(listed.code, 0, listed.stderr);
  const template = (JSON.parse(listed.stdout) as { id: string; configuration: { model: string; gpu: string } }[])[0]!;
  const deployed = await cli.run(['deploy', 'templated', '--template', template.id, '--detach', '--json']);
  t.is(deployed.code, 0, deployed.stderr);
  const read = (await api.request('GET', `/api/deployments/${JSON.parse(deployed.stdout).id}`, { token: user.token })).body.data;
  t.like(read, { name: 'templated', model: template.configuration.model, gpu: template.configuration.gpu });
  const both = await cli.run(['deploy', 'twice', '--template', template.id, '--model', 'meta-llama/Llama-3.1-8B-Instruct']);
  t.is(both.code, 2);
  t.regex(both.stderr, /leave out --model and --gpu/);
});

test('delete asks unless --yes: without a terminal and without --yes it is a usage error and nothing is deleted', async (t) => {
  const { user, cli } = await loggedIn();
  const created = await api.request('POST', '/v1/deployments', { token: user.token, body: validDeployment('doomed') });
  const refused = await cli.run(['delete', 'doomed']);
  t.is(refused.code, 2);
  t.regex(refused.stderr, /--yes/);
  t.is((await api.request('GET', `/api/deployments/${created.body.id}`, { token: user.token })).body.data.status, 'pending');

  const deleted = await cli.run(['delete', 'doomed', '--yes']);
  t.is(deleted.code, 0, deleted.stderr);
  t.regex(deleted.stderr, /doomed \(dep_\w+\): (deleting|deleted)/);
  t.true(['deleting', 'deleted'].includes((await api.request('GET', `/api/deployments/${created.body.id}`, { token: user.token })).body.data.status));
});

test('bad input exits 2 with a readable message, whether the CLI or Kiln finds it', async (t) => {
  const { cli } = await loggedIn();
  const cases: [string[], RegExp][] = [
    [['scale', 'chat', 'lots'], /'lots' is invalid for argument 'replicas'\. expected a whole number/],
    [['ls', '--output', 'xml'], /argument 'xml' is invalid\. Allowed choices are table, json, yaml/],
    [['deploy', 'chat'], /deploy needs --model and --gpu/],
    [['apply', '-f', '/nonexistent/kiln.yaml'], /Cannot read \/nonexistent\/kiln\.yaml/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['deploy', 'Not_A_Name', '--model', 'meta-llama/Llama-3.1-8B-Instruct', '--gpu', 'nvidia-l4', '--detach'], /error: .*name.*\((INVALID_REQUEST|VALIDATION_ERROR|INVALID_FIELD)\)/i],
  ];
  for (const [args, message] of cases) {
    const result = await cli.run(args);
    t.is(result.code, 2, `kiln ${args.join(' ')}: ${result.stderr}`);
    t.regex(result.stderr, message, `kiln ${args.join(' ')}`);
    t.is(result.stdout, '', 'nothing on stdout');
  }
});

test('deploy from flags creates the deployment and shows its lifecycle; with no worker it stops waiting at --timeout with the way to follow it', async (t) => {
  const { user, cli } = await loggedIn();
  const detached = await cli.run(['deploy', 'flagged', '--model', 'meta-llama/Llama-3.1-8B-Instruct', '--gpu', 'nvidia-l4', '--max-replicas', '2', '--detach', '--json']);
  t.is(detached.code, 0, detached.stderr);
  const id = JSON.parse(detached.stdout).id as string;
  const read = (await api.request('GET', `/api/deployments/${id}`, { token: user.token })).body.data;
  t.like(read, { name: 'flagged', gpu: 'nvidia-l4', maxReplicas: 2 });

  const waited = await cli.run(['deploy', 'waited', '--model', 'meta-llama/Llama-3.1-8B-Instruct', '--gpu', 'nvidia-l4', '--timeout', '1']);
  t.is(waited.code, 1);
  t.regex(waited.stderr, /waited: pending \(PENDING, 0\/1 replicas\)/);
  t.regex(waited.stderr, /\(TIMEOUT\)/);
  t.regex(waited.stderr, /kiln logs -f dep_/);
});

test('a deployment that fails while deploy waits ends with its failure reason and the recovery command, exit 1', async (t) => {
  const { user, cli } = await loggedIn();
  const waiting = cli.run(['deploy', 'breaks', '--model', 'meta-llama/Llama-3.1-8B-Instruct', '--gpu', 'nvidia-l4', '--timeout', '120']);
  // What the worker would record when the rollout fails.
  let failed = 0;
  while (!failed) {
    failed = (await api.pool.query(`UPDATE deployment SET status = 'failed', failure_reason = 'ImagePullBackOff: image not found' WHERE name = 'breaks' AND organization_id = $1`, [user.organizationId])).rowCount ?? 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const result = await waiting;
  t.is(result.code, 1);
  t.regex(result.stderr, /breaks: failed \(FAILED/);
  t.regex(result.stderr, /error: Deployment breaks did not come up: ImagePullBackOff: image not found \(DEPLOYMENT_FAILED\)/);
  t.regex(result.stderr, /hint: Retry it with `kiln recover dep_\w+`/);
  t.is(result.stdout, '');
});

test('an unreachable Kiln is exit 1 with UNREACHABLE and the server it tried', async (t) => {
  const cli = await cliUser('http://127.0.0.1:1');
  const result = await cli.run(['ls'], { env: { KILN_API_KEY: 'sk_test_00000000000000000000000000000000', KILN_ORG: 'org_x', KILN_SERVER: 'http://127.0.0.1:59999' } });
  t.is(result.code, 1);
  t.regex(result.stderr, /\(UNREACHABLE\)/);
  t.regex(result.stderr, /hint: Is it running at http:\/\/127\.0\.0\.1:59999/);
});

test('deploy follows the lifecycle on the live-update socket: each status change shows as it happens, without polling', async (t) => {
  const { user, cli } = await loggedIn();
  // Reads only when the socket says something changed: polling would take ten minutes.
  const run = cli.start(['deploy', 'live', '--model', 'meta-llama/Llama-3.1-8B-Instruct', '--gpu', 'nvidia-l4', '--timeout', '600'], { env: { KILN_CLI_POLL_MS: '600000', KILN_CLI_LIVE_POLL_MS: '600000' } });
  const setLive = async (status: string, replicas: number) => (await api.pool.query(
    'UPDATE deployment SET status = $1, current_replicas = $2 WHERE name = \'live\' AND organization_id = $3', [status, replicas, user.organizationId],
  )).rowCount;
  await eventually('the first state shown', async () => (/live: pending \(PENDING/.test(run.output().stderr) ? true : undefined), 30_000);
  t.is(await setLive('deploying', 0), 1);
  await eventually('deploying shown', async () => (/live: deploying \(PENDING/.test(run.output().stderr) ? true : undefined), 30_000);
  await setLive('running', 1);
  const result = await run.done;
  t.is(result.code, 0, result.stderr);
  t.regex(result.stderr, /live: running \(HEALTHY, 1\/1 replicas\)/);
  t.regex(result.stdout, /Endpoint: /);
});

test('apply creates from kiln.yaml, the same file again is "unchanged" and changes nothing, a changed file updates it', async (t) => {
  const { user, cli } = await loggedIn();
  const file = join(cli.home, 'kiln.yaml');
  await writeFile(file, 'name: applied\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: nvidia-l4\nmaxReplicas: 2\n');
  const first = await cli.run(['apply', '-f', file, '--detach']);
  t.is(first.code, 0, first.stderr);
  t.regex(first.stderr, /Created applied \(dep_\w+\)/);
  const id = /\((dep_\w+)\)/.exec(first.stderr)![1]!;
  const before = (await api.request('GET', `/api/deployments/${id}`, { token: user.token })).body.data;
  const sentBefore = (await desiredStatesSent(api, id)).length;

  const again = await cli.run(['apply', '-f', file, '--detach']);
  t.is(again.code, 0, again.stderr);
  t.regex(again.stderr, /applied \(dep_\w+\) unchanged/);
  const same = (await api.request('GET', `/api/deployments/${id}`, { token: user.token })).body.data;
  t.is(same.updatedAt, before.updatedAt, 'nothing was written');
  t.is((await desiredStatesSent(api, id)).length, sentBefore, 'no new desired state');

  await writeFile(file, 'name: applied\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpu: nvidia-l4\nmaxReplicas: 4\n');
  const changed = await cli.run(['apply', '-f', file, '--detach']);
  t.is(changed.code, 0, changed.stderr);
  t.regex(changed.stderr, /Updated applied \(dep_\w+\): maxReplicas/);
  t.is((await api.request('GET', `/api/deployments/${id}`, { token: user.token })).body.data.maxReplicas, 4);
  const listed = await api.request('GET', `/v1/deployments?orgId=${user.organizationId}`, { token: user.token });
  t.is(listed.body.data.length, 1, 'one deployment, updated in place');

  await writeFile(file, 'name: applied\nmodle: typo\n');
  const typo = await cli.run(['apply', '-f', file]);
  t.is(typo.code, 2);
  t.regex(typo.stderr, /unknown field modle/);
});

test('keys create shows the value once on stdout; ls lists it without; revoke stops it', async (t) => {
  const { cli } = await loggedIn();
  const created = await cli.run(['keys', 'create', '--name', 'ci', '--scope', 'read_only']);
  t.is(created.code, 0, created.stderr);
  const key = created.stdout.trim();
  t.regex(key, /^sk_(live|test)_[A-Za-z0-9]{32}$/);
  const ls = await cli.run(['keys', 'ls', '--json']);
  const listed = JSON.parse(ls.stdout) as { id: string; name: string }[];
  const ci = listed.find((k) => k.name === 'ci')!;
  t.truthy(ci);
  t.false(ls.stdout.includes(key));
  const revoke = await cli.run(['keys', 'revoke', ci.id]);
  t.is(revoke.code, 0, revoke.stderr);
  const after = await api.request('GET', '/api/deployments/dep_unknown', { token: key });
  t.is(after.status, 401);
});

test('models search, templates and usage answer as tables and JSON', async (t) => {
  const { cli } = await loggedIn();
  const models = await cli.run(['models', 'search', 'llama', '--json']);
  t.is(models.code, 0, models.stderr);
  t.true((JSON.parse(models.stdout) as { id: string }[]).some((m) => /llama/i.test(m.id)));
  const templates = await cli.run(['templates']);
  t.is(templates.code, 0, templates.stderr);
  t.regex(templates.stdout, /ID.*NAME.*MODEL/);
  const usage = await cli.run(['usage', '--json']);
  t.is(usage.code, 0, usage.stderr);
  t.is(typeof JSON.parse(usage.stdout).totalCents, 'number');
});

test('recover retries a failed deployment', async (t) => {
  const { id, email, password } = await signupWithDeployment(api);
  const cli = await cliUser(api.url);
  t.is((await cli.run(['login', '--email', email, '--password-stdin'], { input: password })).code, 0);
  await api.pool.query(`UPDATE deployment SET status = 'failed', failure_reason = 'ImagePullBackOff' WHERE id = $1`, [id]);
  const recover = await cli.run(['recover', id, '--detach']);
  t.is(recover.code, 0, recover.stderr);
  t.regex(recover.stderr, /retry requested/);
});

test('every command has --help with an example, and completion scripts are valid shell', async (t) => {
  const cli = await cliUser(api.url);
  const commands = ['login', 'logout', 'whoami', 'ls', 'get', 'deploy', 'apply', 'scale', 'stop', 'start', 'restart', 'delete', 'logs', 'chat', 'models search', 'templates', 'keys create', 'keys ls', 'keys revoke', 'usage', 'recover', 'completion'];
  await Promise.all(commands.map(async (command) => {
    const help = await cli.run([...command.split(' '), '--help']);
    t.is(help.code, 0, command);
    t.regex(help.stdout, /Examples:\n {2}\$ .*kiln /, command);
  }));
  const bash = await cli.run(['completion', 'bash']);
  t.is(bash.code, 0);
  t.regex(bash.stdout, /complete -F _kiln kiln/);
  t.regex(bash.stdout, /deploy\) words=".*--model/);
  t.is(spawnSync('bash', ['-n'], { input: bash.stdout }).status, 0, 'bash parses it');
  const fish = await cli.run(['completion', 'fish']);
  t.regex(fish.stdout, /complete -c kiln -n '__fish_use_subcommand' -a deploy/);
  const unknown = await cli.run(['completion', 'tcsh']);
  t.is(unknown.code, 2);
});
