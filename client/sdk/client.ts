// Kiln's TypeScript SDK: openapi-fetch over the types openapi-typescript generates from Kiln's OpenAPI
// document (schema.ts), plus the client rules of the API reference: retry 429, 500, 502, 503 and 504 with
// backoff of 1, 2, 4, 8 and 16 seconds (or the answer's Retry-After), never anything else; an
// Idempotency-Key on every POST, the same on each retry, so a retried creation never creates twice; errors
// thrown as KilnError with Kiln's code whichever surface (/v1 or /api) answered.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.ts';

export type { paths, components, operations } from './schema.ts';

/** Statuses worth another try: the server was busy or failing, the request itself may be fine. */
export const RETRIED_STATUSES: readonly number[] = [429, 500, 502, 503, 504];
/** Seconds to wait before each retry when the answer does not say (Retry-After). */
export const BACKOFF_SECONDS: readonly number[] = [1, 2, 4, 8, 16];
/** The longest Retry-After honoured: a longer one is cut to this, so a client never hangs for minutes. */
const MAX_RETRY_AFTER_SECONDS = 60;

export interface KilnClientOptions {
  /** Where Kiln answers, e.g. http://localhost:3000 (no trailing path). */
  baseUrl: string;
  /** An API key (sk_live_..., sk_test_...) or a login's access token. */
  token?: string;
  /** The organization to act in, for a user who belongs to several (X-Organization-Id). */
  organizationId?: string;
  /** The fetch to send with (tests: a recording one). */
  fetch?: typeof fetch;
  /** How to wait between tries (tests: no wait, or a recording one). */
  sleep?: (ms: number) => Promise<void>;
  /** The backoff in seconds, one entry per retry (default BACKOFF_SECONDS: five retries). */
  backoffSeconds?: readonly number[];
  /** A new Idempotency-Key for one logical call (default: a random UUID). */
  newIdempotencyKey?: () => string;
  /**
   * The longest wait the client makes before retrying a 429; one that asks for longer (Retry-After) is returned
   * at once instead, for the caller to show (other statuses are retried as the rule says). Default: any wait,
   * up to 60 s. The dashboard sets a few seconds, so a person is told how long to wait rather than shown a page
   * that keeps loading.
   */
  longestWaitSeconds?: number;
  /** Told before each retry: what failed and how long the client waits. */
  onRetry?: (info: { attempt: number; status: number; waitMs: number; method: string; url: string }) => void;
  userAgent?: string;
}

/** An answer other than 2xx, with Kiln's error code (or HTTP_<status> when the body has none). */
export class KilnError extends Error {
  override readonly name = 'KilnError';
  readonly statusCode: number;
  readonly code: string;
  readonly details: Record<string, unknown>;
  readonly requestId: string | undefined;
  /** How long the answer asked the caller to wait before trying again (its Retry-After), when it said. */
  readonly retryAfterSeconds: number | undefined;
  constructor(statusCode: number, code: string, message: string, details: Record<string, unknown> = {}, requestId?: string, retryAfterSeconds?: number) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.details = details;
    this.requestId = requestId;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Reads either surface's error body: /v1's {error, message, code, statusCode}, /api's {success:false, error:{code, message, details}}. */
export function errorFrom(status: number, body: unknown, headers?: Headers): KilnError {
  const error = (code: string, message: string, details: Record<string, unknown> = {}) =>
    new KilnError(status, code, message, details, headers?.get('X-Request-Id') ?? undefined, retryAfterSeconds(headers?.get('Retry-After') ?? null));
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    if (typeof b.code === 'string') return error(b.code, String(b.message ?? b.error ?? ''));
    const nested = b.error as Record<string, unknown> | null | undefined;
    if (nested && typeof nested === 'object' && typeof nested.code === 'string') {
      return error(nested.code, String(nested.message ?? ''), (nested.details as Record<string, unknown>) ?? {});
    }
  }
  return error(`HTTP_${status}`, typeof body === 'string' && body.trim() ? body.trim().slice(0, 200) : `HTTP ${status}`);
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed), MAX_RETRY_AFTER_SECONDS);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, Math.ceil((at - now) / 1000)), MAX_RETRY_AFTER_SECONDS);
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A fetch that applies the retry rule and the Idempotency-Key. The key is chosen once per call (here, before
 * the first try), so every retry of a POST carries the same key and the server answers a retry of a
 * creation that already happened with the stored answer.
 */
export function retryingFetch(options: Pick<KilnClientOptions, 'fetch' | 'sleep' | 'backoffSeconds' | 'longestWaitSeconds' | 'newIdempotencyKey' | 'onRetry'> = {}): typeof fetch {
  const send = options.fetch ?? globalThis.fetch;
  const sleep = options.sleep ?? wait;
  const backoff = options.backoffSeconds ?? BACKOFF_SECONDS;
  const newKey = options.newIdempotencyKey ?? (() => crypto.randomUUID());
  return async (input, init) => {
    const first = new Request(input, init);
    if (first.method === 'POST' && !first.headers.has('Idempotency-Key')) first.headers.set('Idempotency-Key', newKey());
    for (let attempt = 0; ; attempt += 1) {
      // A request's body can be read once: each try sends a copy, the original stays for the next.
      const response = await send(attempt < backoff.length ? first.clone() : first);
      if (!RETRIED_STATUSES.includes(response.status) || attempt >= backoff.length) return response;
      const waitMs = (retryAfterSeconds(response.headers.get('Retry-After')) ?? backoff[attempt]!) * 1000;
      if (response.status === 429 && options.longestWaitSeconds !== undefined && waitMs > options.longestWaitSeconds * 1000) return response;
      options.onRetry?.({ attempt: attempt + 1, status: response.status, waitMs, method: first.method, url: first.url });
      await response.body?.cancel();
      await sleep(waitMs);
    }
  };
}

export type KilnClient = Client<paths>;

/**
 * The typed client: `kiln.GET('/v1/deployments', { params: { query: { limit: 20 } } })`. Any answer other
 * than 2xx is thrown as a KilnError (after the retries the rule allows), so `data` is the success body.
 */
export function createKilnClient(options: KilnClientOptions): KilnClient {
  const headers: Record<string, string> = { 'User-Agent': options.userAgent ?? 'kiln-sdk' };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.organizationId) headers['X-Organization-Id'] = options.organizationId;
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), headers, fetch: retryingFetch(options) });
  client.use({
    async onResponse({ response }) {
      if (response.ok) return undefined;
      const text = await response.clone().text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: the text is the message
      }
      throw errorFrom(response.status, body, response.headers);
    },
  });
  return client;
}

/** The success body of a call (the client throws on any other answer, so its absence is a 204). */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined && !response.ok) throw errorFrom(response.status, error, response.headers);
  return data as T;
}

/** Server-sent events of a streamed answer (inference with stream: true, logs with follow=true), one at a time. */
export async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length) yield { event, data: data.join('\n') };
    }
  }
}
