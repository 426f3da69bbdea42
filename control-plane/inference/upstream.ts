// One POST to a model server (a replica's pod, or a cluster's gateway). Its failures are told apart because
// the gateway answers them differently: no connection (the next replica is tried, then 503), silence (504),
// the client going away (the request is dropped).
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';

/** No connection could be made, or it broke before any answer: nothing reached the model. */
export class UnreachableError extends Error {}
/** The model server said nothing for the whole silence allowance, before its answer or inside it. */
export class SilenceError extends Error {}

export interface UpstreamTimeouts {
  /** A connection not made within this counts as unreachable. */
  readonly connectMs: number;
  /** Silence allowed before the answer starts and between two of its chunks. */
  readonly silenceMs: number;
}

export interface UpstreamAgents {
  readonly http: http.Agent;
  readonly https: https.Agent;
}

/** Connections to model servers are kept open between requests (most of an inference is not its handshake). */
export function createAgents(): UpstreamAgents {
  return { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
}

/**
 * POSTs `body` (JSON) to `url`; answers with the response once its headers arrive, whatever its status.
 * Rejects with UnreachableError, SilenceError, or the signal's reason once it aborts.
 */
export function postJson(url: URL, body: Buffer, options: { agents: UpstreamAgents; timeouts: UpstreamTimeouts; signal: AbortSignal }): Promise<IncomingMessage> {
  const { signal, timeouts } = options;
  return new Promise((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const req = (secure ? https : http).request(url, {
      method: 'POST',
      agent: secure ? options.agents.https : options.agents.http,
      signal,
      headers: { 'content-type': 'application/json', 'content-length': body.length, accept: 'application/json, text/event-stream' },
    });
    let response: IncomingMessage | undefined;
    const connectTimer = setTimeout(() => req.destroy(new UnreachableError(`no connection to ${url.host} within ${timeouts.connectMs} ms`)), timeouts.connectMs);
    req.once('socket', (socket) => {
      // A kept-alive socket is connected already.
      if (socket.connecting) socket.once('connect', () => clearTimeout(connectTimer));
      else clearTimeout(connectTimer);
    });
    // Also covers a started answer: a stream that falls silent is cut off, and its reader sees why.
    req.setTimeout(timeouts.silenceMs, () => {
      const error = new SilenceError(`no answer from ${url.host} for ${timeouts.silenceMs} ms`);
      response?.destroy(error);
      req.destroy(error);
    });
    req.once('response', (res) => {
      clearTimeout(connectTimer);
      response = res;
      resolve(res);
    });
    req.once('error', (error) => {
      clearTimeout(connectTimer);
      if (signal.aborted || error instanceof SilenceError || error instanceof UnreachableError) reject(error);
      // Refused, reset before any answer, no route: the model never answered, so another replica may.
      else reject(new UnreachableError(`${url.host}: ${error.message}`, { cause: error }));
    });
    req.end(body);
  });
}
