// Kiln's Kubernetes API client, used by the API (cluster registration, inference pod discovery, pod logs), the
// worker (namespaces, readiness), and the local cluster: JSON over HTTPS with the
// cluster's CA and the credentials of a kubeconfig (a token, a client certificate, or `aws eks get-token`).
import { execFile } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import { request } from 'node:https';
import { createInterface } from 'node:readline';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { parse } from 'yaml';

export interface KubeCredentials {
  readonly server: string;
  readonly ca: string;
  /** Bearer token; or a client certificate and key (PEM); or an EKS token from the AWS CLI. */
  readonly token?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly awsEks?: AwsEksTokenSource;
}

/** `aws eks get-token` as an EKS kubeconfig (stacks/gpu-cluster/kubeconfig.ts) names it. */
export interface AwsEksTokenSource {
  readonly clusterName: string;
  readonly region?: string;
  readonly roleArn?: string;
  readonly profile?: string;
}

export class KubeApiError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, method: string, path: string, body: unknown) {
    super(`${method} ${path} answered ${status}: ${typeof body === 'string' ? body : JSON.stringify(body)}`);
    this.status = status;
    this.body = body;
  }
}

export interface KubeApi {
  request<T = unknown>(method: string, path: string, body?: unknown, contentType?: string): Promise<T>;
  get<T = unknown>(path: string): Promise<T>;
  /** Creates an object, or leaves it as it is when it exists already. */
  ensure(path: string, object: unknown): Promise<void>;
  /**
   * A long GET (a watch or a followed log), answered line by line as the server writes; ends when the server
   * closes or `signal` aborts. A status of 400 or more rejects with KubeApiError before any line.
   */
  lines(path: string, signal: AbortSignal): AsyncIterable<string>;
}

export function kubeApi(credentials: KubeCredentials, options: { timeoutMs?: number } = {}): KubeApi {
  const bearer = credentials.awsEks ? awsEksTokens(credentials.awsEks) : async () => credentials.token;
  const call = async <T>(method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const token = await bearer();
    return new Promise<T>((resolve, reject) => {
      const url = new URL(path, credentials.server);
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(url, {
        method,
        ca: credentials.ca,
        cert: credentials.cert,
        key: credentials.key,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          accept: 'application/json',
          ...(payload ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } : {}),
        },
        timeout: options.timeoutMs ?? 30_000,
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try { parsed = JSON.parse(text); } catch { /* plain-text answer such as /readyz */ }
          if ((res.statusCode ?? 500) >= 400) reject(new KubeApiError(res.statusCode ?? 500, method, path, parsed));
          else resolve(parsed as T);
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(payload);
    });
  };
  async function* lines(path: string, signal: AbortSignal): AsyncIterable<string> {
    const token = await bearer();
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(new URL(path, credentials.server), {
        method: 'GET', ca: credentials.ca, cert: credentials.cert, key: credentials.key, signal,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), accept: 'application/json' },
      }, resolve);
      req.on('error', reject);
      req.end();
    });
    if ((res.statusCode ?? 500) >= 400) {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown = text;
      try { parsed = JSON.parse(text); } catch { /* plain text */ }
      throw new KubeApiError(res.statusCode ?? 500, 'GET', path, parsed);
    }
    try {
      for await (const line of createInterface({ input: res, crlfDelay: Infinity })) if (line) yield line;
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  }
  return {
    request: call,
    get: (path) => call('GET', path),
    lines,
    ensure: async (path, object) => {
      await call('POST', path, object).catch((e: unknown) => {
        if (!(e instanceof KubeApiError && e.status === 409)) throw e;
      });
    },
  };
}

/** The API of the cluster a kubeconfig (YAML) names, with its current context's credentials; throws as parseKubeconfig does. */
export function kubeApiFromKubeconfig(yaml: string, options: { timeoutMs?: number; source?: string } = {}): KubeApi {
  return kubeApi(parseKubeconfig(yaml, options.source), options);
}

/** Reads the server, CA and credentials of a kubeconfig file's current context. */
export async function credentialsFromKubeconfig(path: string): Promise<KubeCredentials> {
  return parseKubeconfig(await readFile(path, 'utf8'), path);
}

const run = promisify(execFile);
/** Renew an EKS token this long before it expires. */
const EKS_TOKEN_MARGIN_MS = 60_000;

/** Bearer tokens from `aws eks get-token`, fetched once and reused until shortly before they expire. */
function awsEksTokens(source: AwsEksTokenSource): () => Promise<string> {
  let current: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;
  const fetchToken = async () => {
    const args = ['eks', 'get-token', '--cluster-name', source.clusterName, '--output', 'json',
      ...(source.region ? ['--region', source.region] : []), ...(source.roleArn ? ['--role-arn', source.roleArn] : [])];
    const env = { ...process.env, ...(source.profile ? { AWS_PROFILE: source.profile } : {}) };
    const { stdout } = await run('aws', args, { env, timeout: 30_000 }).catch((error: Error & { stderr?: string }) => {
      throw new Error(`aws eks get-token failed: ${(error.stderr || error.message).trim().slice(0, 500)}`, { cause: error });
    });
    const credential = JSON.parse(stdout) as { status?: { token?: string; expirationTimestamp?: string } };
    const token = credential.status?.token;
    if (!token) throw new Error('aws eks get-token printed no status.token');
    const expires = Date.parse(credential.status?.expirationTimestamp ?? '') || Date.now() + 10 * 60_000;
    current = { token, renewAt: expires - EKS_TOKEN_MARGIN_MS };
    return token;
  };
  return async () => {
    if (current && Date.now() < current.renewAt) return current.token;
    // Concurrent requests share one run of the CLI.
    pending ??= fetchToken().finally(() => { pending = undefined; });
    return pending;
  };
}

type ExecConfig = { command?: string; args?: string[]; env?: { name: string; value: string }[] | null };

/**
 * The one command a kubeconfig may name: `aws eks get-token` with the cluster, region, role and profile
 * of the kubeconfigs EKS and Kiln's gpu-cluster stack write. Anything else is refused: Kiln never runs an
 * arbitrary program a kubeconfig names.
 */
function awsEksSource(exec: ExecConfig, source: string): AwsEksTokenSource {
  const refuse = () => new Error(`${source}: the only command a kubeconfig may run is \`aws eks get-token\` (with --cluster-name, --region, --role-arn, --output json; AWS_PROFILE)`);
  const [eks, getToken, ...rest] = exec.args ?? [];
  if (exec.command !== 'aws' || eks !== 'eks' || getToken !== 'get-token' || rest.length % 2) throw refuse();
  const flags = new Map<string, string>();
  for (let i = 0; i < rest.length; i += 2) {
    const [flag, value] = [rest[i]!, rest[i + 1]!];
    if (!['--cluster-name', '--region', '--role-arn', '--output'].includes(flag) || flags.has(flag) || value.startsWith('-')) throw refuse();
    flags.set(flag, value);
  }
  const env = exec.env ?? [];
  if (!flags.get('--cluster-name') || (flags.has('--output') && flags.get('--output') !== 'json') || env.some((e) => e.name !== 'AWS_PROFILE')) throw refuse();
  const profile = env.find((e) => e.name === 'AWS_PROFILE')?.value;
  return {
    clusterName: flags.get('--cluster-name')!,
    ...(flags.has('--region') ? { region: flags.get('--region') } : {}),
    ...(flags.has('--role-arn') ? { roleArn: flags.get('--role-arn') } : {}),
    ...(profile ? { profile } : {}),
  };
}

/**
 * The server, CA and credentials (a bearer token, a client certificate, or `aws eks get-token`) of a
 * kubeconfig's current context.
 */
export function parseKubeconfig(yaml: string, source = 'kubeconfig'): KubeCredentials {
  interface Named<T> { name: string; [key: string]: unknown; cluster?: T; user?: T; context?: T }
  let config: {
    'current-context'?: string;
    contexts?: Named<{ cluster: string; user: string }>[];
    clusters?: Named<{ server: string; 'certificate-authority-data'?: string }>[];
    users?: Named<{ token?: string; 'client-certificate-data'?: string; 'client-key-data'?: string; exec?: ExecConfig }>[];
  } | null;
  try {
    config = parse(yaml) as typeof config;
  } catch (error) {
    throw new Error(`${source} is not YAML: ${(error as Error).message}`, { cause: error });
  }
  const context = config?.contexts?.find((c) => c.name === config['current-context'])?.context;
  const cluster = config?.clusters?.find((c) => c.name === context?.cluster)?.cluster;
  const user = config?.users?.find((u) => u.name === context?.user)?.user;
  const cert = user?.['client-certificate-data'];
  const key = user?.['client-key-data'];
  if (!cluster?.server || !cluster['certificate-authority-data'] || !(user?.token || (cert && key) || user?.exec)) {
    throw new Error(`${source}: the current context needs a server, certificate-authority-data and a token, client certificate data or \`aws eks get-token\``);
  }
  const pem = (data: string) => Buffer.from(data, 'base64').toString('utf8');
  const identity = user.token ? { token: user.token } : cert && key ? { cert: pem(cert), key: pem(key) } : { awsEks: awsEksSource(user.exec!, source) };
  return { server: cluster.server, ca: pem(cluster['certificate-authority-data']), ...identity };
}
