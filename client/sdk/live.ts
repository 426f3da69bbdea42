// Kiln's live updates (GET /v1/ws, a WebSocket the OpenAPI document cannot describe): the organization's
// events as they happen, e.g. a deployment's status changes, so a client need not poll for them.
import WebSocket from 'ws';
import { liveEventsUrl, type LiveEvent } from './liveEvents.ts';

export type { LiveEvent } from './liveEvents.ts';

export interface LiveEventsOptions {
  baseUrl: string;
  token: string;
  orgId: string;
  deploymentIds?: readonly string[];
  /** Event types or categories (deployment, alert, notification). */
  types?: readonly string[];
  onEvent(event: LiveEvent): void;
  /** How long to wait for the socket to open and say ws.ready (default 5 s). */
  timeoutMs?: number;
}

export interface LiveEvents {
  close(): void;
  /** Settles when the socket closes, for whatever reason. */
  readonly closed: Promise<void>;
}

/** Opens the socket; resolves once Kiln said ws.ready, rejects when the server has no socket or refuses it. */
export function openLiveEvents(options: LiveEventsOptions): Promise<LiveEvents> {
  const url = liveEventsUrl(new URL('/v1/ws', options.baseUrl), options);
  const timeoutMs = options.timeoutMs ?? 5000;
  const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${options.token}` }, handshakeTimeout: timeoutMs });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { socket.terminate(); reject(new Error('no ws.ready in time')); }, timeoutMs);
    socket.once('error', (error) => { clearTimeout(timer); reject(error); });
    socket.once('unexpected-response', (_request, response) => { clearTimeout(timer); socket.terminate(); reject(new Error(`the socket was refused: ${response.statusCode}`)); });
    socket.on('message', (raw) => {
      let event: LiveEvent;
      try {
        event = JSON.parse(String(raw)) as LiveEvent;
      } catch {
        return;
      }
      if (event.type === 'ws.ready') {
        clearTimeout(timer);
        // After it opened, errors end the socket (closed settles); the caller carries on without it.
        socket.on('error', () => undefined);
        resolve({ close: () => socket.close(), closed });
        return;
      }
      options.onEvent(event);
    });
  });
}
