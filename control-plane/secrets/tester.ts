// POST /secrets/test: asks the service a credential is for whether it accepts it (the Hub's whoami, an
// object store's ListObjectsV2, a Docker registry's /v2/), and says what it answered. Every failure is a
// result (`ok: false` with a reason), never an error of the route; a detail never holds the credential, and
// answers' bodies are reduced to the one field read (a user name, an error code) before they are quoted.
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import aws4 from 'aws4';
import { assertPublicUrl, PrivateUrlError, publicOnlyLookup } from '../../lib/network-guard.ts';
import type { Credential, SecretType } from './organization-secret.entity.ts';


export interface TestResult { ok: boolean; service: string; detail: string }

export interface TesterOptions {
  /** The Hugging Face Hub (or its mirror) Kiln is configured with, and how long a test waits for any service. */
  hubEndpoint: string;
  timeoutMs: number;
  /** Development and tests: user-given endpoints may be loopback or private; production refuses them (SSRF). */
  allowPrivateUrls: boolean;
}

const SERVICES: Record<SecretType, string> = {
  huggingface_token: 'huggingface.whoami', object_store: 's3.ListObjectsV2', registry_password: 'registry.v2',
};

interface Answer { status: number; headers: IncomingMessage['headers']; body: string }

/** Why a request got no answer, without the request (its headers carry the credential). */
class Unreachable extends Error {}

async function send(url: URL, options: RequestOptions & { publicOnly: boolean; timeoutMs: number }): Promise<Answer> {
  // An address written as an IP is never looked up, so the lookup's guard alone would not see it.
  if (options.publicOnly) {
    await assertPublicUrl(url.href).catch((error: unknown) => {
      throw new Unreachable(error instanceof PrivateUrlError ? error.message : `could not reach ${url.host}: it does not resolve`);
    });
  }
  const go = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const { publicOnly, timeoutMs, ...rest } = options;
  return new Promise((resolve, reject) => {
    // Redirects are not followed: one could lead to a private address, or carry the credential elsewhere.
    const req = go(url, { ...rest, timeout: timeoutMs, ...(publicOnly ? { lookup: publicOnlyLookup } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= 256 * 1024) chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => reject(new Unreachable(`${url.host} broke its answer off`)));
    });
    req.on('timeout', () => req.destroy(new Unreachable(`${url.host} did not answer within ${timeoutMs} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof Unreachable) return reject(error);
      // The code (ECONNREFUSED, ENOTFOUND, EPRIVATE...), or the guard's own sentence, which names the host only.
      const reason = error.code === 'EPRIVATE' ? error.message : `${error.code ?? 'connection failed'}`;
      reject(new Unreachable(`could not reach ${url.host}: ${reason}`));
    });
    req.end();
  });
}

const xmlField = (xml: string, tag: string) => new RegExp(`<${tag}>([^<]{0,200})</${tag}>`).exec(xml)?.[1];

export function createCredentialTester(options: TesterOptions) {
  const common = { timeoutMs: options.timeoutMs };

  async function huggingFace(token: string): Promise<TestResult> {
    // The Hub's address is Kiln's own configuration (a mirror may be on a private network), not the caller's.
    const answer = await send(new URL(`${options.hubEndpoint}/api/whoami-v2`), { ...common, method: 'GET', publicOnly: false, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
    if (answer.status === 200) {
      const who = (() => { try { return JSON.parse(answer.body) as { name?: unknown; type?: unknown }; } catch { return {}; } })();
      const name = typeof who.name === 'string' ? who.name.slice(0, 100) : 'unknown';
      return { ok: true, service: SERVICES.huggingface_token, detail: `the Hub accepts the token: it belongs to ${typeof who.type === 'string' ? `${who.type.slice(0, 20)} ` : ''}${name}` };
    }
    if (answer.status === 401 || answer.status === 403) return { ok: false, service: SERVICES.huggingface_token, detail: `the Hub refused the token (${answer.status})` };
    return { ok: false, service: SERVICES.huggingface_token, detail: `the Hub answered ${answer.status}` };
  }

  async function objectStore(c: Extract<Credential, { type: 'object_store' }>): Promise<TestResult> {
    const endpoint = new URL(c.endpoint);
    // Path-style addressing (endpoint/bucket): every S3-compatible store answers it. One key is enough to know.
    const basePath = endpoint.pathname.replace(/\/+$/, '');
    const path = `${basePath}/${encodeURIComponent(c.bucket)}?list-type=2&max-keys=1`;
    const signed = aws4.sign({ host: endpoint.host, path, method: 'GET', service: 's3', region: c.region, headers: {} },
      { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey });
    const answer = await send(new URL(path, endpoint), { ...common, method: 'GET', publicOnly: !options.allowPrivateUrls, headers: signed.headers });
    const service = SERVICES.object_store;
    if (answer.status === 200) {
      const count = xmlField(answer.body, 'KeyCount');
      return { ok: true, service, detail: `listed bucket ${c.bucket} at ${endpoint.host}${count === undefined ? '' : ` (${count} key${count === '1' ? '' : 's'} on the first page)`}` };
    }
    const code = xmlField(answer.body, 'Code');
    return { ok: false, service, detail: `${endpoint.host} refused the listing of ${c.bucket} (${answer.status}${code ? ` ${code}` : ''})` };
  }

  async function registry(c: Extract<Credential, { type: 'registry_password' }>): Promise<TestResult> {
    const service = SERVICES.registry_password;
    const publicOnly = !options.allowPrivateUrls;
    const basic = `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
    const base = new URL(c.registry);
    const first = await send(new URL('/v2/', base), { ...common, method: 'GET', publicOnly, headers: { authorization: basic } });
    if (first.status === 200) return { ok: true, service, detail: `${base.host} accepts ${c.username}` };
    // Token-authenticating registries (Docker Hub, GHCR) answer 401 with a realm that exchanges the password for a token.
    const challenge = /^Bearer\s+(.*)$/i.exec(String(first.headers['www-authenticate'] ?? ''));
    if (first.status === 401 && challenge) {
      const params = Object.fromEntries([...challenge[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
      if (params.realm) {
        const realm = new URL(params.realm);
        if (params.service) realm.searchParams.set('service', params.service);
        const token = await send(realm, { ...common, method: 'GET', publicOnly, headers: { authorization: basic } });
        if (token.status === 200) return { ok: true, service, detail: `${realm.host} issues ${c.username} a token for ${base.host}` };
        return { ok: false, service, detail: `${realm.host} refused ${c.username} (${token.status})` };
      }
    }
    return { ok: false, service, detail: `${base.host} refused ${c.username} (${first.status})` };
  }

  return {
    async test(credential: Credential): Promise<TestResult> {
      try {
        if (credential.type === 'huggingface_token') return await huggingFace(credential.value);
        if (credential.type === 'object_store') return await objectStore(credential);
        return await registry(credential);
      } catch (error) {
        const detail = error instanceof Unreachable ? error.message : 'the test could not be made';
        return { ok: false, service: SERVICES[credential.type], detail };
      }
    },
  };
}

export type CredentialTester = ReturnType<typeof createCredentialTester>;
