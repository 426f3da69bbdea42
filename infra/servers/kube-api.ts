// A minimal Kubernetes API client for Kiln's own scripts and tests: JSON over HTTPS with the cluster's CA
// and a bearer token, read from a kubeconfig. (Users look with kubectl; code asks the API directly.)
import { request } from 'node:https';
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';

export interface KubeCredentials {
  readonly server: string;
  readonly ca: string;
  /** Bearer token; or a client certificate and key (PEM). */
  readonly token?: string;
  readonly cert?: string;
  readonly key?: string;
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
}

export function kubeApi(credentials: KubeCredentials, options: { timeoutMs?: number } = {}): KubeApi {
  const call = <T>(method: string, path: string, body?: unknown, contentType = 'application/json') =>
    new Promise<T>((resolve, reject) => {
      const url = new URL(path, credentials.server);
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(url, {
        method,
        ca: credentials.ca,
        cert: credentials.cert,
        key: credentials.key,
        headers: {
          ...(credentials.token ? { authorization: `Bearer ${credentials.token}` } : {}),
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
  return {
    request: call,
    get: (path) => call('GET', path),
    ensure: async (path, object) => {
      await call('POST', path, object).catch((e: unknown) => {
        if (!(e instanceof KubeApiError && e.status === 409)) throw e;
      });
    },
  };
}

/** Reads the server, CA and credentials of a kubeconfig file's current context. */
export async function credentialsFromKubeconfig(path: string): Promise<KubeCredentials> {
  return parseKubeconfig(await readFile(path, 'utf8'), path);
}

/**
 * The server, CA and credentials (a bearer token or a client certificate) of a kubeconfig's current
 * context. Commands (`exec`, auth plugins) are refused: Kiln never runs a program a kubeconfig names.
 */
export function parseKubeconfig(yaml: string, source = 'kubeconfig'): KubeCredentials {
  interface Named<T> { name: string; [key: string]: unknown; cluster?: T; user?: T; context?: T }
  let config: {
    'current-context'?: string;
    contexts?: Named<{ cluster: string; user: string }>[];
    clusters?: Named<{ server: string; 'certificate-authority-data'?: string }>[];
    users?: Named<{ token?: string; 'client-certificate-data'?: string; 'client-key-data'?: string }>[];
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
  if (!cluster?.server || !cluster['certificate-authority-data'] || !(user?.token || (cert && key))) {
    throw new Error(`${source}: the current context needs a server, certificate-authority-data and a token or client certificate data`);
  }
  const pem = (data: string) => Buffer.from(data, 'base64').toString('utf8');
  return {
    server: cluster.server,
    ca: pem(cluster['certificate-authority-data']),
    ...(user.token ? { token: user.token } : { cert: pem(cert!), key: pem(key!) }),
  };
}
