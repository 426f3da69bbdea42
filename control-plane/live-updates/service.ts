// The socket service of one API replica: the HTTP server's upgrade requests, the WebSocket handshakes and the
// hub (hub.ts) that feeds the sockets. An upgrade request runs through the Koa app like any request (request
// id, credential, rate limit, the route's permission and query validation, the error format): its answer is
// written on the raw socket, and only GET /v1/ws, once it let the caller through, switches the socket to a
// WebSocket. Browsers, which cannot send Authorization on a socket, present a single-use ticket instead,
// checked here before the app sees the request.
import { randomUUID } from 'node:crypto';
import { ServerResponse, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import type { Principal } from '../auth/principal.ts';
import { describeError, ForbiddenError, UnauthenticatedError } from '../core/errors.ts';
import { isAllowed } from '../core/permissions.ts';
import { errorBody } from '../http/surface.ts';
import { parseInput } from '../http/validate.ts';
import type { LiveHub, SocketFilters } from './hub.ts';
import { LiveSocketQuery } from './schemas.ts';

/** Set by this service on each upgrade request it hands the app (any value a client sent is replaced). */
export const UPGRADE_HEADER = 'x-kiln-upgrade';
export const SOCKET_PATH = '/v1/ws';
/** What a socket needs: the permission of GET /v1/ws. */
export const SOCKET_PERMISSION = 'deployments:read';

export interface PendingUpgrade {
  readonly req: IncomingMessage;
  readonly socket: Duplex;
  readonly head: Buffer;
  /** The app's answer, on the socket until the handshake takes it over (absent: the app never saw the request). */
  readonly res?: ServerResponse;
  claimed: boolean;
}

export interface LiveUpdatesService {
  readonly hub: LiveHub;
  /** The upgrade request the app is handling under this id (the UPGRADE_HEADER value), once. */
  claim(id: string): PendingUpgrade | undefined;
  /** Completes the WebSocket handshake of a claimed upgrade and hands the socket to the hub. */
  upgrade(pending: PendingUpgrade, principal: Principal, filters: SocketFilters, lastEventId: string | undefined): void;
  /** Takes the server's upgrade requests and starts listening for events; the module's start calls it, before the server listens. */
  attach(server: Server, app: Pick<Koa, 'callback'>): Promise<void>;
  /** Closes every socket and the LISTEN connection; call before the server closes. */
  close(): Promise<void>;
}

export function createLiveUpdatesService(hub: LiveHub, log: Pick<Logger, 'error'>): LiveUpdatesService {
  const pending = new Map<string, PendingUpgrade>();
  const wss = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: 64 * 1024 });
  let detach: (() => void) | undefined;

  function upgrade(p: PendingUpgrade, principal: Principal, filters: SocketFilters, lastEventId: string | undefined): void {
    p.claimed = true;
    // The app's answer to this request is never written: the handshake's 101 is.
    p.res?.detachSocket(p.socket as Socket);
    wss.handleUpgrade(p.req, p.socket, p.head, (ws) => hub.accept(ws, principal, filters, lastEventId));
  }

  /** An answer written straight on the socket, in the reference API's error shape. */
  function refuse(socket: Duplex, error: unknown): void {
    const described = describeError(error);
    if (described.status >= 500) log.error({ err: error }, 'live updates: socket upgrade failed');
    const body = JSON.stringify(errorBody('reference', described));
    socket.end(`HTTP/1.1 ${described.status} ${STATUS_CODES[described.status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }

  async function viaTicket(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    const query: Record<string, string | string[]> = {};
    for (const key of new Set(url.searchParams.keys())) {
      const values = url.searchParams.getAll(key);
      query[key] = values.length === 1 ? values[0]! : values;
    }
    const input = parseInput(LiveSocketQuery, query, 'query');
    const principal = await hub.redeemTicket(input.ticket!);
    if (!principal) throw new UnauthenticatedError('Invalid, used or expired ticket');
    if (input.orgId !== principal.organizationId) throw new ForbiddenError('Insufficient permissions');
    if (!isAllowed(SOCKET_PERMISSION, principal.permissions, principal.scope, principal.platformAdmin)) throw new ForbiddenError('Insufficient permissions');
    upgrade({ req, socket, head, claimed: false }, principal, { deploymentIds: input.deploymentIds, types: input.types }, input.lastEventId);
  }

  return {
    hub,
    upgrade,

    claim(id) {
      const p = pending.get(id);
      if (!p || p.claimed) return undefined;
      return p;
    },

    async attach(server, app) {
      const handle = app.callback();
      const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        socket.on('error', () => socket.destroy());
        const url = new URL(req.url ?? '/', 'http://localhost');
        if (url.pathname === SOCKET_PATH && url.searchParams.has('ticket') && !req.headers.authorization) {
          viaTicket(req, socket, head, url).catch((error: unknown) => refuse(socket, error));
          return;
        }
        const id = randomUUID();
        const res = new ServerResponse(req);
        const p: PendingUpgrade = { req, socket, head, res, claimed: false };
        req.headers[UPGRADE_HEADER] = id;
        pending.set(id, p);
        res.assignSocket(socket as Socket);
        // Every answer but a switch closes the connection: the client asked for a protocol it did not get.
        res.shouldKeepAlive = false;
        res.on('finish', () => {
          if (!p.claimed) socket.end();
        });
        void Promise.resolve(handle(req, res)).finally(() => pending.delete(id));
      };
      server.on('upgrade', onUpgrade);
      detach = () => server.off('upgrade', onUpgrade);
      await hub.start();
    },

    async close() {
      detach?.();
      detach = undefined;
      await hub.close();
      wss.close();
    },
  };
}
