// Who a command acts as: the profile, server and organization from the global options, the environment and
// the credentials file, and the SDK client they make.
import type { Command } from 'commander';
import { createKilnClient, ok, type components, type KilnClient } from '../sdk/client.ts';
import { DEFAULT_PROFILE, DEFAULT_SERVER, readConfig, writeConfig, type Profile } from './config.ts';
import { CliError } from './errors.ts';
import { note, paint, type OutputFormat } from './output.ts';

export type Deployment = components['schemas']['Deployment'];

export interface GlobalOptions { profile?: string; server?: string; org?: string; output?: OutputFormat; json?: boolean }

/** What a command needs to call Kiln: the profile it acts as, its client, its organization. */
export class Session {
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

/** The session of the command that runs, from its options and the program's. */
export const session = async (command: Command) => new Session(command.optsWithGlobals<GlobalOptions>()).load();
