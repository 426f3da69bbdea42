// A STAND-IN for the Hugging Face Hub, not the Hub: a small HTTP server that serves RECORDED Hub answers
// (test/fixtures/hub/<org>/<name>/info.json and config.json) at the paths huggingface.co serves them, for
// the API's Hub client (@huggingface/hub) in tests, since the machines that run them cannot reach the Hub.
// Like the Hub it answers 401 RepoNotFound for a repository it has no recording of, 404 for an unknown
// revision, and 401 GatedRepo for a gated model's files without the token it accepts; its whoami-v2 knows
// that token alone. It can also fail on
// purpose (5xx, or never answering) so tests see what a broken Hub does to Kiln.
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startTestApi, type TestApi } from './control-plane.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hub');

/** The token the stand-in accepts for gated models' files (give it to the API as KILN_HF_TOKEN). */
export const RECORDED_HUB_TOKEN = 'hf_recordingsStandInToken';

export interface HubRecordings {
  /** Base URL, as KILN_HF_ENDPOINT takes it. */
  readonly url: string;
  /** The config for startTestApi: this stand-in as the Hub (a busy test machine may take a while to answer). */
  hubConfig(token?: string, timeoutMs?: number): { hub: { endpoint: string; token: string | undefined; timeoutMs: number } };
  /** Every request path it received, in order. */
  readonly requests: string[];
  /** `answer`: recorded answers; `error`: 503 to everything; `silent`: never answers (a Hub that hangs). */
  mode: 'answer' | 'error' | 'silent';
  close(): Promise<void>;
}

async function recording(repo: string, file: 'info.json' | 'config.json'): Promise<string | undefined> {
  // Repository ids are two path-safe segments (the API checked them): no way out of FIXTURES.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/.test(repo) || repo.includes('..')) return undefined;
  return readFile(join(FIXTURES, repo, file), 'utf8').catch(() => undefined);
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));
}

const notFound = (res: ServerResponse) => json(res, 401, {
  error: 'Repository not found',
}, { 'x-error-code': 'RepoNotFound', 'x-error-message': 'Repository not found' });

/**
 * What the Hub's GET /api/whoami-v2 answers for RECORDED_HUB_TOKEN (its shape, with the fields Kiln reads:
 * type and name); any other token gets the Hub's 401.
 */
export const RECORDED_WHOAMI = { type: 'user', id: '6500000000000000000000aa', name: 'kiln-recordings', fullname: 'Kiln recordings', isPro: false, orgs: [], auth: { type: 'access_token', accessToken: { displayName: 'kiln-tests', role: 'read' } } };

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://hub');
  if (url.pathname === '/api/whoami-v2') {
    if (req.headers.authorization === `Bearer ${RECORDED_HUB_TOKEN}`) return json(res, 200, RECORDED_WHOAMI);
    return json(res, 401, { error: 'Invalid credentials in Authorization header' });
  }
  const api = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/([^/]+)$/.exec(url.pathname);
  if (api) {
    const [, repo, revision] = api as unknown as [string, string, string];
    const info = await recording(repo, 'info.json');
    if (!info) return notFound(res);
    const recorded = JSON.parse(info) as { sha: string };
    if (!['HEAD', 'main', recorded.sha].includes(decodeURIComponent(revision))) {
      return json(res, 404, { error: `Invalid rev id: ${decodeURIComponent(revision)}` }, { 'x-error-code': 'RevisionNotFound' });
    }
    return json(res, 200, recorded);
  }
  const file = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/config\.json$/.exec(url.pathname);
  if (file) {
    const [, repo, revision] = file as unknown as [string, string, string];
    const [info, config] = [await recording(repo, 'info.json'), await recording(repo, 'config.json')];
    if (!info || !config) return notFound(res);
    const recorded = JSON.parse(info) as { sha: string; gated: false | string };
    if (!['main', recorded.sha].includes(decodeURIComponent(revision))) {
      return json(res, 404, { error: 'Revision Not Found' }, { 'x-error-code': 'RevisionNotFound' });
    }
    if (recorded.gated && req.headers.authorization !== `Bearer ${RECORDED_HUB_TOKEN}`) {
      return json(res, 401, { error: `Access to model ${repo} is restricted. You must have access to it and be authenticated to access it. Please log in.` }, { 'x-error-code': 'GatedRepo' });
    }
    // The Hub answers ranges of a file (the client asks for its first byte to learn its size, then for all of it).
    const body = Buffer.from(config);
    const headers = { 'content-type': 'text/plain; charset=utf-8', etag: `"${recorded.sha}-config"`, 'accept-ranges': 'bytes' };
    const range = /^bytes=(\d+)-(\d+)?$/.exec(req.headers.range ?? '');
    if (!range) return void res.writeHead(200, { ...headers, 'content-length': String(body.length) }).end(body);
    const start = Number(range[1]);
    const end = Math.min(range[2] === undefined ? body.length - 1 : Number(range[2]), body.length - 1);
    return void res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${body.length}` }).end(body.subarray(start, end + 1));
  }
  json(res, 404, { error: 'Not Found' });
}

export async function startHubRecordings(): Promise<HubRecordings> {
  const requests: string[] = [];
  const held = new Set<ServerResponse>();
  const recordings: HubRecordings = {
    url: '',
    requests,
    mode: 'answer',
    hubConfig: (token, timeoutMs = 10_000) => ({ hub: { endpoint: recordings.url, token, timeoutMs } }),
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
  const server = createServer((req, res) => {
    requests.push(req.url ?? '/');
    if (recordings.mode === 'silent') {
      held.add(res);
      return;
    }
    if (recordings.mode === 'error') return json(res, 503, { error: 'Service Unavailable' });
    answer(req, res).catch((error: unknown) => json(res, 500, { error: String(error) }));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', () => listening()));
  (recordings as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return recordings;
}

/** A test API that looks models up on a Hub stand-in of its own; `close` stops both. */
export async function startHubApi(filename: string): Promise<{ api: TestApi; hub: HubRecordings; close(): Promise<void> }> {
  const hub = await startHubRecordings();
  const api = await startTestApi(filename, { config: hub.hubConfig() });
  return { api, hub, close: async () => { await api.close(); await hub.close(); } };
}
