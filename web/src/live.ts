// Live events in the browser: the native WebSocket on GET /v1/ws, opened with a single-use ticket from
// POST /v1/ws/tickets (a browser cannot send Authorization on a socket). Reconnects with backoff and a
// new ticket, replaying what it missed after the last event id; `ws.resync` (too much missed) calls
// onResync so the page refetches.
import { useEffect, useRef, useState } from 'react';
import { liveEventsUrl, type LiveEvent } from '../../client/sdk/liveEvents.ts';
import { api, ok } from './api.ts';

export type { LiveEvent } from '../../client/sdk/liveEvents.ts';

export interface LiveOptions {
  /** Event types or categories (deployment, alert, notification); all when absent. */
  types?: readonly string[];
  deploymentIds?: readonly string[];
  onEvent(event: LiveEvent): void;
  /** Events were missed (or the socket came back after a gap): refetch what the page shows. */
  onResync?(): void;
  /** false: no socket (e.g. until the page knows what to watch). */
  enabled?: boolean;
}

export type LiveState = 'connecting' | 'live' | 'offline';

const BACKOFF_MS = [1000, 2000, 5000, 10_000, 30_000];

/**
 * `const state = useLiveEvents({ types: ['deployment'], onEvent: (e) => ... })`: the socket lives while the
 * component is mounted and the filters stay the same. Answers the connection's state, for a "live" badge.
 */
export function useLiveEvents(options: LiveOptions): LiveState {
  const [state, setState] = useState<LiveState>('connecting');
  // The latest callbacks, so a re-render with new closures does not reopen the socket.
  const handlers = useRef(options);
  handlers.current = options;
  const types = options.types?.join(',') ?? '';
  const deploymentIds = options.deploymentIds?.join(',') ?? '';
  const enabled = options.enabled ?? true;

  useEffect(() => {
    if (!enabled) return undefined;
    // The lists this socket was opened for (the effect runs again when they change).
    const filters = { types: handlers.current.types, deploymentIds: handlers.current.deploymentIds };
    let socket: WebSocket | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let attempt = 0;
    let lastEventId: string | undefined;
    let stopped = false;

    const connect = async () => {
      setState('connecting');
      try {
        const { url } = await ok(api.POST('/v1/ws/tickets'));
        if (stopped) return;
        socket = new WebSocket(liveEventsUrl(new URL(url, window.location.href), { ...filters, lastEventId }));
        socket.onmessage = (message) => {
          let event: LiveEvent;
          try {
            event = JSON.parse(String(message.data)) as LiveEvent;
          } catch {
            return;
          }
          if (event.id) lastEventId = event.id;
          if (event.type === 'ws.ready') {
            attempt = 0;
            setState('live');
          } else if (event.type === 'ws.resync') handlers.current.onResync?.();
          else if (!event.type.startsWith('ws.')) handlers.current.onEvent(event);
        };
        socket.onclose = () => retry();
      } catch {
        retry();
      }
    };
    const retry = () => {
      if (stopped) return;
      setState('offline');
      const wait = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]!;
      attempt += 1;
      timer = setTimeout(() => void connect(), wait);
    };
    void connect();
    return () => {
      stopped = true;
      clearTimeout(timer);
      if (socket) {
        socket.onclose = null;
        socket.close();
      }
    };
  }, [enabled, types, deploymentIds]);

  return state;
}
