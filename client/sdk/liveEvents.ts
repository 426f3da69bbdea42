// What Kiln's live-update socket (GET /v1/ws) sends and how its address says what to send: shared by
// sdk/live.ts (Node, the ws library) and the dashboard (the browser's WebSocket), so it imports nothing.

export interface LiveEvent {
  /** The event log's id (absent on ws.* control messages). */
  id?: string;
  type: string;
  organizationId?: string;
  deploymentId?: string | null;
  data?: Record<string, unknown>;
  createdAt?: string;
}

/** Which events the socket sends; each absent or empty one does not narrow. */
export interface LiveFilters {
  orgId?: string;
  /** Event types or categories (deployment, alert, notification). */
  types?: readonly string[];
  deploymentIds?: readonly string[];
  /** Replay what came after this event (a reconnect). */
  lastEventId?: string;
}

/** The socket's address: the http(s) URL of GET /v1/ws (or a ticket's) as ws(s), with the filters in its query. */
export function liveEventsUrl(httpUrl: URL, filters: LiveFilters): URL {
  const address = new URL(httpUrl);
  address.protocol = address.protocol === 'https:' || address.protocol === 'wss:' ? 'wss:' : 'ws:';
  const query: [string, string | undefined][] = [
    ['orgId', filters.orgId],
    ['types', filters.types?.join(',')],
    ['deploymentIds', filters.deploymentIds?.join(',')],
    ['lastEventId', filters.lastEventId],
  ];
  for (const [name, value] of query) if (value) address.searchParams.set(name, value);
  return address;
}
