// The `kiln` command line: every command a call or a few through the SDK (sdk/client.ts), as any other
// client of Kiln would make them. Exit codes are stable: 0 done, 1 an error (Kiln's or the network's),
// 2 a usage mistake (bad flags or arguments, input Kiln refused as invalid, a question without a terminal).
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { confirm, input, password as passwordPrompt, select } from '@inquirer/prompts';
import YAML from 'yaml';
import { createKilnClient, KilnError, ok, serverSentEvents, type components, type KilnClient } from '../sdk/client.ts';
import { openLiveEvents, type LiveEvents } from '../sdk/live.ts';
import { DEFAULT_PROFILE, DEFAULT_SERVER, readConfig, writeConfig, credentialsFile, type Profile } from './config.ts';
import { note, OUTPUT_FORMATS, paint, printData, printList, printObject, progress, type Column, type OutputFormat } from './output.ts';
import { completionScript, SHELLS } from './completion.ts';

type Deployment = components['schemas']['Deployment'];

/** A failure the CLI itself states: its code, a hint, and the exit code (1 error, 2 usage). */
export class CliError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly exitCode: number;
  constructor(code: string, message: string, hint?: string, exitCode = 1) {
    super(message);
    this.code = code;
    this.hint = hint;
    this.exitCode = exitCode;
  }
}

const usage = (message: string, hint?: string) => new CliError('USAGE', message, hint, 2);

interface GlobalOptions { profile?: string; server?: string; org?: string; output?: OutputFormat; json?: boolean }

const interactive = () => Boolean(process.stdin.isTTY && process.stdout.isTTY);

function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string) => {
    if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number.');
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected ${min} to ${max}.`);
    return n;
  };
}
const repeat = (value: string, previous: string[] = []) => [...previous, value];

/** What a command needs to call Kiln: the profile it acts as, its client, its organization. */
class Session {
  readonly options: GlobalOptions;
  readonly format: OutputFormat;
  private profileName = DEFAULT_PROFILE;
  private profile: Profile | undefined;
  private clientCache: KilnClient | undefined;
  server = DEFAULT_SERVER;

  constructor(options: GlobalOptions) {
    this.options = options;
    this.format = options.json ? 'json' : options.output ?? 'table';
  }

  async load(): Promise<this> {
    const config = await readConfig();
    this.profileName = this.options.profile ?? process.env.KILN_PROFILE ?? config.current ?? DEFAULT_PROFILE;
    this.profile = config.profiles[this.profileName];
    this.server = (this.options.server ?? process.env.KILN_SERVER ?? this.profile?.server ?? DEFAULT_SERVER).replace(/\/+$/, '');
    return this;
  }

  get name() { return this.profileName; }

  /** The credential in use: KILN_API_KEY, else the profile's. */
  get token(): string {
    const token = process.env.KILN_API_KEY ?? this.profile?.token;
    if (!token) throw new CliError('NOT_LOGGED_IN', `No credential for profile "${this.profileName}"`, 'Run `kiln login` (or set KILN_API_KEY).');
    return token;
  }

  /** The client, as the credential in use. */
  get client(): KilnClient {
    if (this.clientCache) return this.clientCache;
    const token = this.token;
    const profile = this.profile;
    const refreshable = !process.env.KILN_API_KEY && profile?.kind === 'session' && profile.refreshToken;
    this.clientCache = createKilnClient({
      baseUrl: this.server, token, userAgent: 'kiln-cli',
      fetch: refreshable ? this.refreshingFetch() : undefined,
      onRetry: ({ status, waitMs }) => note(paint('dim', `Kiln answered ${status}; retrying in ${Math.round(waitMs / 1000)} s`, process.stderr)),
    });
    return this.clientCache;
  }

  /** A session's access token lasts an hour: on 401 it is renewed once with the refresh token, and saved. */
  private refreshingFetch(): typeof fetch {
    return async (input, init) => {
      const request = new Request(input, init);
      const spare = request.clone();
      const response = await fetch(request);
      const profile = this.profile!;
      if (response.status !== 401 || !profile.refreshToken) return response;
      const renewed = await fetch(`${this.server}/api/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh_token: profile.refreshToken }) });
      if (!renewed.ok) return response;
      const body = await renewed.json() as { data: { access_token: string; refresh_token: string } };
      Object.assign(profile, { token: body.data.access_token, refreshToken: body.data.refresh_token });
      const config = await readConfig();
      config.profiles[this.profileName] = profile;
      await writeConfig(config);
      spare.headers.set('Authorization', `Bearer ${profile.token}`);
      return fetch(spare);
    };
  }

  /** The organization the reference API's calls name (orgId). */
  get orgId(): string {
    const org = this.options.org ?? process.env.KILN_ORG ?? this.profile?.organizationId;
    if (!org) throw new CliError('ORGANIZATION_UNKNOWN', 'Which organization to act in is not known for this credential', 'Pass --org org_... (or set KILN_ORG), or log in again with `kiln login --api-key <key> --org org_...`.');
    return org;
  }

  /** Saves the profile and makes it the default; says which profile was the default before, when another. */
  async saveProfile(profile: Profile): Promise<string | undefined> {
    const config = await readConfig();
    const before = config.current;
    config.profiles[this.profileName] = profile;
    config.current = this.profileName;
    await writeConfig(config);
    return before !== undefined && before !== this.profileName ? before : undefined;
  }

  async forgetProfile(): Promise<boolean> {
    const config = await readConfig();
    if (!config.profiles[this.profileName]) return false;
    delete config.profiles[this.profileName];
    if (config.current === this.profileName) config.current = Object.keys(config.profiles)[0];
    await writeConfig(config);
    return true;
  }

  /** Every deployment of the organization (all pages), newest first. */
  async deployments(): Promise<Deployment[]> {
    const all: Deployment[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(this.client.GET('/v1/deployments', { params: { query: { orgId: this.orgId, limit: 100, ...(cursor ? { cursor } : {}) } } }));
      all.push(...page.data);
      cursor = page.pagination.hasMore ? page.pagination.nextCursor ?? undefined : undefined;
    } while (cursor && all.length < 10_000);
    return all;
  }

  /** A deployment named by id (dep_...) or by name. */
  async deploymentId(ref: string): Promise<string> {
    if (/^dep_/.test(ref)) return ref;
    const found = (await this.deployments()).filter((d) => d.name === ref && d.status !== 'deleted');
    if (!found.length) throw new CliError('DEPLOYMENT_NOT_FOUND', `No deployment named "${ref}"`, '`kiln ls` lists your deployments.');
    return found[0]!.id;
  }

  async deployment(id: string): Promise<Deployment> {
    return (await ok(this.client.GET('/api/deployments/{id}', { params: { path: { id } } }))).data;
  }
}

/** The fields `kiln ls --json` gives: the API reference's listing fields, and what names a deployment. */
export const LISTING_FIELDS = ['id', 'name', 'model', 'status', 'state', 'currentReplicas', 'maxReplicas', 'gpuType', 'createdAt'] as const;
const listing = (d: Deployment) => Object.fromEntries(LISTING_FIELDS.map((f) => [f, d[f]]));

const STATE_STYLE: Record<string, Parameters<typeof paint>[0]> = { HEALTHY: 'green', SCALING: 'yellow', PENDING: 'yellow', FAILED: 'red', IDLE: 'cyan', STOPPED: 'dim', DELETING: 'dim', DELETED: 'dim' };
const DEPLOYMENT_COLUMNS: Column<Deployment>[] = [
  { header: 'ID', value: (d) => d.id },
  { header: 'NAME', value: (d) => d.name },
  { header: 'MODEL', value: (d) => d.model },
  { header: 'GPU', value: (d) => d.gpuType },
  // Running now over the count asked for (the autoscaler moves the first between minReplicas and maxReplicas).
  { header: 'RUNNING/WANTED', value: (d) => `${d.currentReplicas}/${d.replicas}` },
  { header: 'STATE', value: (d) => paint(STATE_STYLE[d.state] ?? 'reset', d.state) },
  { header: 'STATUS', value: (d) => d.status },
  { header: 'CREATED', value: (d) => d.createdAt },
];

/** What a user sends a deployment: one call, ready to paste (the key stays in the environment). */
export const sampleCall = (server: string, id: string) => [
  `curl ${server}/v1/inference \\`,
  `  -H "Authorization: Bearer $KILN_API_KEY" -H 'Content-Type: application/json' \\`,
  `  -d '{"deployment":"${id}","messages":[{"role":"user","content":"Hello!"}]}'`,
].join('\n');

const pollMs = () => Number(process.env.KILN_CLI_POLL_MS ?? 2000);
/** With the live socket open, a read now and then all the same, in case an event was missed. */
const livePollMs = () => Number(process.env.KILN_CLI_LIVE_POLL_MS ?? 15_000);

/**
 * Follows a deployment until it runs, fails or stops, showing each lifecycle step; the endpoint or the failure
 * at the end. Each change arrives on the live-update socket (GET /v1/ws) where the server has one, and is then
 * read whole; without a socket the deployment is read every KILN_CLI_POLL_MS. With `changedAfter` (the
 * `updatedAt` of the answer to a request that restarts its rollout, e.g. a retry of a failed one), a status the
 * deployment had before the workflow took the request up is not its outcome: it counts once the deployment has
 * changed since (a different stamp: the worker's clock may differ from the API's, so not a later one).
 */
async function waitForDeployment(session: Session, id: string, timeoutSeconds: number, changedAfter?: string): Promise<Deployment> {
  const describe = (d: Deployment) => `${d.name}: ${d.status} (${d.state}, ${d.currentReplicas}/${d.maxReplicas} replicas)`;
  let wake: (() => void) | undefined;
  // Opened before the first read, so no change between the two is missed.
  const live: LiveEvents | undefined = await openLiveEvents({
    baseUrl: session.server, token: session.token, orgId: session.orgId, deploymentIds: [id], types: ['deployment'], onEvent: () => wake?.(),
  }).catch(() => undefined);
  let socketOpen = Boolean(live);
  void live?.closed.then(() => { socketOpen = false; wake?.(); });
  try {
    let current = await session.deployment(id);
    const shown = progress(describe(current));
    const deadline = Date.now() + timeoutSeconds * 1000;
    const settled = (d: Deployment) => ['running', 'failed', 'stopped', 'deleted', 'scaled_to_zero'].includes(d.status)
      && (changedAfter === undefined || d.updatedAt !== changedAfter);
    while (!settled(current)) {
      const left = deadline - Date.now();
      if (left <= 0) {
        shown.fail(`${describe(current)}: still not running after ${timeoutSeconds} s`);
        throw new CliError('TIMEOUT', `Deployment ${id} is not running yet`, `It goes on in Kiln: \`kiln get ${id}\` or \`kiln logs -f ${id}\` shows how it is doing.`);
      }
      const woken = new Promise<void>((resolve) => { wake = resolve; });
      // The timer goes when the socket wakes the loop first: a pending one would keep the process alive.
      const timer = new AbortController();
      await Promise.race([sleep(Math.min(socketOpen ? livePollMs() : pollMs(), left), undefined, { signal: timer.signal }).catch(() => undefined), woken]);
      timer.abort();
      current = await session.deployment(id);
      shown.update(describe(current));
    }
    if (current.status === 'running' || current.status === 'scaled_to_zero') {
      shown.succeed(describe(current));
      return current;
    }
    shown.fail(describe(current));
    const reason = current.failureReason ?? `it is ${current.status}`;
    throw new CliError('DEPLOYMENT_FAILED', `Deployment ${current.name} did not come up: ${reason}`, `Retry it with \`kiln recover ${id}\` (see why first: \`kiln logs ${id}\`).`);
  } finally {
    live?.close();
  }
}

function printReady(session: Session, d: Deployment): void {
  if (session.format !== 'table') return printData(session.format, d);
  process.stdout.write(`${paint('green', '✔')} ${d.name} is ${d.status}\nEndpoint: ${d.endpoint}\nTry it:\n${sampleCall(session.server, d.id)}\n`);
}

/** The fields a kiln.yaml may set, as the deployment API names them. */
const FILE_FIELDS = ['name', 'model', 'runtime', 'gpu', 'replicas', 'minReplicas', 'maxReplicas', 'autoscaling', 'gpusPerReplica', 'contextLength', 'dtype', 'vllmArgs'] as const;
type DeploymentFile = { name: string } & Partial<Record<(typeof FILE_FIELDS)[number], unknown>>;

async function readDeploymentFile(path: string): Promise<DeploymentFile> {
  let text: string;
  try {
    text = path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch (error) {
    throw usage(`Cannot read ${path}: ${(error as Error).message}`, 'Give the file with -f, e.g. `kiln apply -f kiln.yaml`.');
  }
  let parsed: unknown;
  try {
    parsed = YAML.parse(text);
  } catch (error) {
    throw usage(`${path} is not valid YAML: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw usage(`${path} must be a mapping of fields (name, model, gpu, ...)`);
  const unknown = Object.keys(parsed).filter((k) => !(FILE_FIELDS as readonly string[]).includes(k));
  if (unknown.length) throw usage(`${path}: unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`, `A kiln.yaml may set ${FILE_FIELDS.join(', ')}.`);
  const file = parsed as DeploymentFile;
  if (typeof file.name !== 'string' || !file.name) throw usage(`${path}: name is required`);
  return file;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
/** Autoscaling given in part: the settings left out keep the deployment's. */
const differs = (key: string, wanted: unknown, current: Deployment) => {
  const now = (current as Record<string, unknown>)[key];
  if (key === 'autoscaling' && wanted && typeof wanted === 'object') return !same({ ...(now as object), ...wanted }, now);
  return !same(wanted, now);
};

/**
 * The organization a credential acts in. A key scoped to deployments may not read the organization's settings
 * (403); it is then checked against a route its scope reads, so a key of another organization is still refused,
 * and the organization is known by its id alone.
 */
/** What a login says when it took the default from another profile. */
function nowDefault(name: string, replaced: string | undefined): string {
  return replaced ? ` It is now the default profile, in place of "${replaced}" (commands use it unless --profile says otherwise).` : '';
}

async function organizationOf(client: KilnClient, orgId: string): Promise<{ id: string; name?: string; plan?: string }> {
  try {
    return await ok(client.GET('/v1/settings/organization', { params: { query: { orgId } } }));
  } catch (error) {
    if (!(error instanceof KilnError && error.statusCode === 403)) throw error;
    await ok(client.GET('/v1/deployments', { params: { query: { orgId, limit: 1 } } }));
    return { id: orgId };
  }
}

const EXAMPLES = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

export function buildProgram(): Command {
  const program = new Command('kiln');
  program
    .description('Deploy and run AI models on Kiln from the terminal.')
    .version('0.1.0')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ outputError: (text, write) => write(paint('red', text.trimEnd(), process.stderr) + '\n') })
    .option('-p, --profile <name>', 'the saved login to use (default: the last one logged in; env KILN_PROFILE)')
    .option('--server <url>', `the Kiln server (default: the profile's, else ${DEFAULT_SERVER}; env KILN_SERVER)`)
    .option('--org <id>', 'the organization to act in (default: the login\'s; env KILN_ORG)')
    .addOption(new Option('-o, --output <format>', 'how to print results').choices(OUTPUT_FORMATS))
    .option('--json', 'the same as --output json')
    .addHelpText('after', EXAMPLES(['kiln login', 'kiln deploy chat --model meta-llama/Llama-3.1-8B-Instruct --gpu nvidia-l4', 'kiln ls --json', 'kiln chat chat']));

  const session = async (command: Command) => new Session(command.optsWithGlobals<GlobalOptions>()).load();

  program.command('login')
    .description('Log in to a Kiln server with your e-mail and password, or with an API key; the credential is saved for later commands (owner-only file)')
    .option('--email <email>', 'your e-mail address (the password is asked, or read from stdin with --password-stdin)')
    .option('--password-stdin', 'read the password from stdin')
    .option('--api-key <key>', 'an API key (sk_live_... or sk_test_...) instead of e-mail and password; prefer --api-key-stdin, which keeps it out of your shell history')
    .option('--api-key-stdin', 'read the API key from stdin')
    .addHelpText('after', EXAMPLES(['kiln login', 'kiln login --email ada@example.com', 'echo "$KEY" | kiln login --api-key-stdin --org org_... --server https://kiln.example.com --profile prod']))
    .action(async (options: { email?: string; passwordStdin?: boolean; apiKey?: string; apiKeyStdin?: boolean }, command: Command) => {
      const s = await session(command);
      let apiKey = options.apiKey ?? (options.apiKeyStdin ? (await readStdin()).trim() : undefined);
      let email = options.email;
      if (!apiKey && !email) {
        if (!interactive()) throw usage('Nothing to log in with', 'Give --email (with --password-stdin) or --api-key-stdin: there is no terminal to ask on.');
        const how = await select({ message: 'Log in with', choices: [{ name: 'E-mail and password', value: 'password' }, { name: 'API key', value: 'key' }] });
        if (how === 'key') apiKey = await passwordPrompt({ message: 'API key', mask: '*' });
        else email = await input({ message: 'E-mail' });
      }
      if (apiKey) {
        const org = s.options.org ?? process.env.KILN_ORG ?? (interactive() && !options.apiKeyStdin ? await input({ message: 'Organization id (org_...)' }) : undefined);
        if (!org) throw usage('An API key login needs the organization it belongs to', 'Add --org org_...: the dashboard\'s API keys page shows it, with the whole login command (so does `kiln whoami` on a password login).');
        const client = createKilnClient({ baseUrl: s.server, token: apiKey, userAgent: 'kiln-cli' });
        const organization = await organizationOf(client, org);
        const replaced = await s.saveProfile({ server: s.server, token: apiKey, kind: 'api_key', organizationId: organization.id });
        note(`Logged in to ${s.server} with an API key, organization ${organization.name ? `${organization.name} (${organization.id})` : organization.id}, as profile "${s.name}".${nowDefault(s.name, replaced)}`);
        return;
      }
      const password = options.passwordStdin ? (await readStdin()).replace(/\r?\n$/, '') : interactive() ? await passwordPrompt({ message: 'Password', mask: '*' }) : undefined;
      if (!password) throw usage('No password', 'Pipe it with --password-stdin: there is no terminal to ask on.');
      const client = createKilnClient({ baseUrl: s.server, userAgent: 'kiln-cli' });
      const login = await ok(client.POST('/v1/auth/signin', { body: { email: email!, password } }));
      const replaced = await s.saveProfile({ server: s.server, token: login.access_token, refreshToken: login.refresh_token, kind: 'session', organizationId: login.user.organization_id, email: login.user.email });
      note(`Logged in to ${s.server} as ${login.user.email}, organization ${login.user.organization_id}, as profile "${s.name}".${nowDefault(s.name, replaced)}`);
    });

  program.command('logout')
    .description('Forget the saved credential of a profile')
    .addHelpText('after', EXAMPLES(['kiln logout', 'kiln logout --profile prod']))
    .action(async (_options: unknown, command: Command) => {
      const s = await session(command);
      note((await s.forgetProfile()) ? `Logged out of profile "${s.name}" (${credentialsFile()}).` : `Profile "${s.name}" was not logged in.`);
    });

  program.command('whoami')
    .description('Who and which organization the saved credential acts as')
    .addHelpText('after', EXAMPLES(['kiln whoami', 'kiln whoami --json']))
    .action(async (_options: unknown, command: Command) => {
      const s = await session(command);
      const organization = await organizationOf(s.client, s.orgId);
      const profile = await ok(s.client.GET('/v1/settings/profile', { params: { query: { orgId: s.orgId } } })).catch((error: unknown) => {
        if (error instanceof KilnError && error.statusCode === 403) return undefined;
        throw error;
      });
      // A key that may not read the organization's settings shows its id only.
      printObject(s.format, {
        profile: s.name, server: s.server, user: profile?.email ?? '(API key)', organizationId: organization.id,
        ...(organization.name !== undefined && { organization: organization.name, plan: organization.plan }),
      });
    });

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

  program.command('chat').argument('<deployment>', 'id or name')
    .description('Talk to a deployment\'s model: the answer streams in as it is written. Without -m, a conversation (an empty line or Ctrl-D ends it)')
    .option('-m, --message <text>', 'one message, one answer, then exit')
    .option('--system <text>', 'a system prompt')
    .option('--max-tokens <n>', 'the longest answer, tokens', integer(1), 512)
    .addHelpText('after', EXAMPLES(['kiln chat chat', 'kiln chat chat -m "Write a haiku about kilns"']))
    .action(async (ref: string, o: { message?: string; system?: string; maxTokens: number }, command: Command) => {
      const s = await session(command);
      const id = await s.deploymentId(ref);
      const messages: { role: 'system' | 'user' | 'assistant'; content: string }[] = o.system ? [{ role: 'system', content: o.system }] : [];
      const turn = async (text: string) => {
        messages.push({ role: 'user', content: text });
        const { data: stream } = await s.client.POST('/v1/inference', { body: { deployment: id, messages, stream: true, max_tokens: o.maxTokens }, parseAs: 'stream', headers: { accept: 'text/event-stream' } });
        let answer = '';
        for await (const event of serverSentEvents(stream!)) {
          if (event.data === '[DONE]') break;
          const chunk = JSON.parse(event.data) as { choices?: { delta?: { content?: string } }[] };
          const token = chunk.choices?.[0]?.delta?.content ?? '';
          answer += token;
          process.stdout.write(token);
        }
        process.stdout.write('\n');
        messages.push({ role: 'assistant', content: answer });
      };
      if (o.message !== undefined) return turn(o.message);
      const prompt = interactive() ? paint('cyan', 'you> ') : '';
      if (interactive()) note(paint('dim', `Chatting with ${ref}. An empty line or Ctrl-D ends it.`, process.stderr));
      const lines = createInterface({ input: process.stdin, output: process.stdout, terminal: interactive() });
      try {
        lines.setPrompt(prompt);
        lines.prompt();
        for await (const line of lines) {
          if (!line.trim()) break;
          await turn(line);
          lines.prompt();
        }
      } finally {
        lines.close();
      }
    });

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

  const keys = program.command('keys').description('API keys of your organization');
  keys.command('create')
    .description('Create an API key; its value is shown once')
    .requiredOption('--name <name>', 'what the key is for')
    .addOption(new Option('--scope <scope>', 'what it may do').choices(['full_access', 'deployments_only', 'read_only']).default('full_access'))
    .addHelpText('after', EXAMPLES(['kiln keys create --name ci --scope deployments_only']))
    .action(async (o: { name: string; scope: 'full_access' | 'deployments_only' | 'read_only' }, command: Command) => {
      const s = await session(command);
      const key = await ok(s.client.POST('/v1/settings/api-keys', { body: { name: o.name, scope: o.scope } }));
      if (s.format !== 'table') return printData(s.format, { ...key, organizationId: s.orgId });
      process.stdout.write(`${key.key}\n`);
      note(`API key ${key.name} (${key.id}, ${key.scope}) for organization ${s.orgId}. Keep it now: it is not shown again.`);
    });
  keys.command('ls')
    .description('List API keys (never their values)')
    .addHelpText('after', EXAMPLES(['kiln keys ls', 'kiln keys ls --json']))
    .action(async (_options: unknown, command: Command) => {
      const s = await session(command);
      const list = await ok(s.client.GET('/v1/settings/api-keys', { params: { query: { orgId: s.orgId } } }));
      printList(s.format, list, [
        { header: 'ID', value: (k) => k.id }, { header: 'NAME', value: (k) => k.name }, { header: 'SCOPE', value: (k) => k.scope },
        { header: 'PREFIX', value: (k) => k.prefix }, { header: 'CREATED', value: (k) => k.createdAt }, { header: 'LAST USED', value: (k) => k.lastUsedAt },
      ]);
    });
  keys.command('revoke').argument('<id>', 'the key\'s id')
    .description('Revoke an API key: it stops working at once')
    .addHelpText('after', EXAMPLES(['kiln keys revoke key_0123456789abcdefghij']))
    .action(async (id: string, _options: unknown, command: Command) => {
      const s = await session(command);
      const revoked = await ok(s.client.DELETE('/v1/settings/api-keys', { params: { query: { id, orgId: s.orgId } } }));
      if (s.format === 'table') note(`Revoked ${revoked.id}.`);
      else printData(s.format, revoked);
    });

  program.command('usage')
    .description('This billing period\'s GPU hours and cost, per deployment, and your balance')
    .addHelpText('after', EXAMPLES(['kiln usage', 'kiln usage --json']))
    .action(async (_options: unknown, command: Command) => {
      const s = await session(command);
      const usage = (await ok(s.client.GET('/api/billing/usage'))).data;
      if (s.format !== 'table') return printData(s.format, usage);
      const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;
      printList(s.format, usage.deployments, [
        { header: 'DEPLOYMENT', value: (d) => d.name }, { header: 'GPU', value: (d) => d.gpu }, { header: 'GPU HOURS', value: (d) => d.gpuHours.toFixed(2) },
        { header: 'COST', value: (d) => dollars(d.costCents) }, { header: 'REQUESTS', value: (d) => d.requests },
      ]);
      process.stdout.write(`Period ${usage.period.start} to ${usage.period.end}: ${dollars(usage.totalCents)} so far, about ${dollars(usage.projection.periodEndCents)} by its end. Balance ${dollars(usage.balanceCents)}.\n`);
    });

  program.command('recover').argument('<deployment>', 'id or name')
    .description('Retry a failed deployment (or refresh its stack first, or force-delete it)')
    .addOption(new Option('--action <action>', 'what to do').choices(['retry', 'refresh_and_retry', 'force_delete']).default('retry'))
    .option('-d, --detach', 'do not wait for it to run')
    .option('--timeout <seconds>', 'how long to wait for it to run', integer(1), 1800)
    .addHelpText('after', EXAMPLES(['kiln recover chat', 'kiln recover chat --action refresh_and_retry']))
    .action(async (ref: string, o: { action: 'retry' | 'refresh_and_retry' | 'force_delete'; detach?: boolean; timeout: number }, command: Command) => {
      const s = await session(command);
      const id = await s.deploymentId(ref);
      const d = await ok(s.client.POST('/v1/recovery/deployments/{id}', { params: { path: { id } }, body: { action: o.action } }));
      note(`${d.name}: ${o.action} requested (${d.status}).`);
      if (o.detach || o.action === 'force_delete') return;
      printReady(s, await waitForDeployment(s, id, o.timeout, d.updatedAt));
    });

  program.command('completion').argument('[shell]', `one of ${SHELLS.join(', ')}`, 'bash')
    .description('Print a shell completion script')
    .addHelpText('after', EXAMPLES(['source <(kiln completion bash)', 'kiln completion zsh > "${fpath[1]}/_kiln"', 'kiln completion fish > ~/.config/fish/completions/kiln.fish']))
    .action((shell: string) => {
      if (!(SHELLS as readonly string[]).includes(shell)) throw usage(`No completion for ${shell}`, `Choose one of ${SHELLS.join(', ')}.`);
      process.stdout.write(completionScript(program, shell as (typeof SHELLS)[number]));
    });

  return program;
}

/** The hint shown under an error Kiln answered, by status. */
export function hintFor(error: KilnError, command: string): string {
  switch (error.statusCode) {
    case 400: case 422: return `Check the arguments: \`kiln ${command} --help\`.`;
    case 401: return 'Log in again: `kiln login`.';
    case 402: return 'Add credits or raise the budget in the dashboard, then try again.';
    case 403: return 'This credential may not do that: log in as a member with the right role, or use a key with a wider scope.';
    case 404: return '`kiln ls` lists your deployments (by name or id).';
    case 409: return 'It is in a state that refuses this now: `kiln get <deployment>` shows its state.';
    case 429: return 'Too many requests: wait a moment and try again.';
    default: return `Kiln failed to answer; try again later${error.requestId ? ` (request id ${error.requestId})` : ''}.`;
  }
}

/** Runs the CLI on argv; answers the exit code (0 done, 1 error, 2 usage). */
export async function run(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  // The command that ran (e.g. `models search`), for the hint's `kiln <command> --help`.
  let name = 'kiln';
  let server = DEFAULT_SERVER;
  program.hook('preAction', (_program, action) => {
    const path: string[] = [];
    for (let c: Command | null = action; c && c !== program; c = c.parent) path.unshift(c.name());
    name = path.join(' ');
    server = action.optsWithGlobals<GlobalOptions>().server ?? process.env.KILN_SERVER ?? server;
  });
  const fail = (code: string, message: string, hint: string | undefined) => {
    note(`${paint('red', 'error', process.stderr)}: ${message} (${code})`);
    if (hint) note(`${paint('dim', 'hint', process.stderr)}: ${hint}`);
  };
  try {
    await program.parseAsync(argv as string[]);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return ['commander.helpDisplayed', 'commander.help', 'commander.version', 'commander.executeSubCommandAsync'].includes(error.code) ? 0 : 2;
    if (error instanceof CliError) {
      fail(error.code, error.message, error.hint);
      return error.exitCode;
    }
    if (error instanceof KilnError) {
      fail(error.code, error.message, hintFor(error, name));
      return error.statusCode === 400 || error.statusCode === 422 ? 2 : 1;
    }
    if (error instanceof Error && error.name === 'ExitPromptError') return 130;
    if (error instanceof TypeError && error.message === 'fetch failed') {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      fail('UNREACHABLE', `Cannot reach Kiln: ${cause?.code ?? cause?.message ?? 'network error'}`, `Is it running at ${server} (\`npm start\`)? Or point at it: \`--server <url>\` / \`kiln login --server <url>\`.`);
      return 1;
    }
    fail('INTERNAL', error instanceof Error ? error.message : String(error), undefined);
    return 1;
  }
}
