// A real OpenID provider (oidc-provider) in the test process, on https with a self-signed certificate that
// this process (and only it) trusts, so Kiln's relying party runs exactly as in production. Accounts are
// e-mail addresses; a small interaction handler signs in whichever account the test names and consents.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setDefaultCACertificates, getCACertificates } from 'node:tls';
import { promisify } from 'node:util';
import Provider, { type ClientMetadata } from 'oidc-provider';

let certificate: Promise<{ cert: string; key: string }> | undefined;

/** A certificate for 127.0.0.1, made once per test process and added to the CAs that fetch trusts. */
export function testCertificate(): Promise<{ cert: string; key: string }> {
  certificate ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kiln-idp-'));
    try {
      await promisify(execFile)('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
        '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      ]);
      const pair = { cert: await readFile(join(dir, 'cert.pem'), 'utf8'), key: await readFile(join(dir, 'key.pem'), 'utf8') };
      setDefaultCACertificates([...getCACertificates('default'), pair.cert]);
      return pair;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  return certificate;
}

/** An https server on 127.0.0.1 with the test certificate; answers with its base URL. */
export async function startHttpsServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer(await testCertificate(), handler);
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

export interface TestIdp {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Accounts whose e-mail the provider reports as not verified. */
  readonly unverified: Set<string>;
  /**
   * Runs the browser's part of a login: from Kiln's redirect to the provider, signs in as `email`, consents,
   * and answers with the URL the provider sends the browser back to (not yet fetched).
   */
  authorize(authorizationUrl: string, email: string): Promise<URL>;
  close(): Promise<void>;
}

export interface TestIdpOptions {
  /** The account a login without `?login=` signs in (a real browser's, which fills no form here). */
  defaultLogin?: () => string;
}

export async function startTestIdp(client: Pick<ClientMetadata, 'redirect_uris'>, options: TestIdpOptions = {}): Promise<TestIdp> {
  const clientId = 'kiln';
  const clientSecret = 'kiln-client-secret-0123456789';
  const unverified = new Set<string>();
  // The issuer names the port, so the provider is made once the server listens.
  const handlers: { provider?: Provider } = {};
  const { url: issuer, server } = await startHttpsServer((req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      interact(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    } else {
      void handlers.provider!.callback()(req, res);
    }
  });
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: client.redirect_uris }],
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({ sub, email: sub, email_verified: !unverified.has(sub), name: `SSO ${sub.split('@')[0]}` }),
    }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['kiln-test-idp-cookie-key'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
  });
  handlers.provider = provider;

  // Login: the account named by `?login=`; consent: everything asked for.
  async function interact(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') {
      const login = new URL(req.url!, issuer).searchParams.get('login') ?? options.defaultLogin?.();
      await provider.interactionFinished(req, res, { login: { accountId: login! } }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = new provider.Grant({ accountId: details.session!.accountId, clientId });
    grant.addOIDCScope(String(details.params.scope));
    await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  }

  return {
    issuer,
    clientId,
    clientSecret,
    unverified,
    async authorize(authorizationUrl, email) {
      const cookies = new Map<string, string>();
      let url = new URL(authorizationUrl);
      for (let hop = 0; hop < 10; hop++) {
        if (url.origin !== issuer) return url;
        if (url.pathname.startsWith('/interaction/')) url.searchParams.set('login', email);
        const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
        for (const line of res.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const at = pair!.indexOf('=');
          cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
        }
        const location = res.headers.get('location');
        if (!location) throw new Error(`the provider answered ${res.status} without a redirect: ${await res.text()}`);
        url = new URL(location, url);
      }
      throw new Error('too many redirects at the provider');
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
