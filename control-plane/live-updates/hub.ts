// The sockets of one API replica and the fan-out that feeds them. Every replica holds one dedicated LISTEN
// connection on `kiln_live`: the triggers of the live_event log (Migration20261124122000LiveUpdates) announce
// each row there, whichever process wrote its source (this replica, another, or the worker), so each replica
// pushes every event to the sockets it holds that may see it. Round trips (POST /v1/ws/health) travel the same
// channel without touching the log.
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { Principal } from '../auth/principal.ts';
import type { LiveUpdatesSettings } from '../config.ts';
import { isAllowed, type Permission } from '../core/permissions.ts';
import { randomString } from '../../lib/ids.ts';
import { endClient } from '../../lib/pg-client.ts';

export const CHANNEL = 'kiln_live';

/** Close codes a client may see (docs/guides/live-updates.md lists them). */
export const CLOSE_CODES = {
  /** The server is stopping: reconnect (to another replica) with the last event id. */
  goingAway: 1001,
  /** The client read too slowly: more than KILN_WS_MAX_BUFFERED_BYTES waited unsent. Reconnect with the last event id. */
  tooSlow: 4008,
} as const;

export interface LiveEvent {
  /** The log's id (a bigint, as a string): what a client reconnects with. */
  readonly id: string;
  readonly organizationId: string;
  readonly userId: string | null;
  readonly type: string;
  readonly deploymentId: string | null;
  readonly payload: unknown;
  readonly createdAt: string;
}

export interface SocketFilters {
  /** Only events about these deployments (events about none are left out too). */
  readonly deploymentIds?: readonly string[];
  /** Only these types, or categories (`deployment`, `alert`, `notification`). */
  readonly types?: readonly string[];
}

interface Client {
  readonly ws: WebSocket;
  readonly principal: Principal;
  readonly deploymentIds: ReadonlySet<string> | undefined;
  readonly types: readonly string[] | undefined;
  alive: boolean;
  /** While the missed events are replayed: the live ones that arrive meanwhile, sent after. */
  backlog: LiveEvent[] | undefined;
  /**
   * After a replay or a resync: whether an event was already covered by it. pg_notify is delivered
   * asynchronously, so an event replayed (or left to the refetch a resync asks for) can still arrive live later.
   */
  covered: ((id: string) => boolean) | undefined;
}

/** What each category of event needs of the credential: the REST routes' permission for the same records. */
const NEEDS: ReadonlyArray<readonly [prefix: string, permission: Permission]> = [
  ['deployment.', 'deployments:read'],
  ['alert.', 'alerts:read'],
  ['notification.', 'profile:read'],
];

function permits(principal: Principal, event: LiveEvent): boolean {
  const need = NEEDS.find(([prefix]) => event.type.startsWith(prefix));
  if (!need || !isAllowed(need[1], principal.permissions, principal.scope, principal.platformAdmin)) return false;
  // A user's notification is theirs alone; an organization-wide push goes to every member who reads notifications.
  return event.userId === null || event.userId === principal.userId;
}

function matches(client: Client, event: LiveEvent): boolean {
  if (client.deploymentIds && (!event.deploymentId || !client.deploymentIds.has(event.deploymentId))) return false;
  if (client.types && !client.types.some((t) => event.type === t || event.type.startsWith(`${t}.`))) return false;
  return true;
}

/** A notification with the whole event (`p` present) or only its id (too large for NOTIFY). */
interface Announcement { id: string; o?: string; u?: string | null; t?: string; d?: string | null; p?: unknown; c?: string }
interface Echo { echo: { id: string; o: string; u: string; nonce: string; from: string } }
interface Ack { ack: { id: string; to: string; delivered: number } }

// The id as text (a bigint JavaScript cannot hold exactly). Its output name is `id` too, so an ORDER BY must name
// `live_event.id`: a bare `id` sorts the text, and "10" comes before "9".
const ROW = `id::text, organization_id, user_id, type, deployment_id, payload, created_at`;
type Row = { id: string; organization_id: string; user_id: string | null; type: string; deployment_id: string | null; payload: unknown; created_at: Date | string };
const fromRow = (r: Row): LiveEvent => ({
  id: r.id, organizationId: r.organization_id, userId: r.user_id, type: r.type, deploymentId: r.deployment_id, payload: r.payload,
  createdAt: new Date(r.created_at).toISOString(),
});

export interface ReplicaHealth {
  replica: string;
  listening: boolean;
  heartbeatSeconds: number;
  connections: { replica: number; organization: number; organizationOnThisReplica: number };
  replicas: number;
  lastEventId: string | null;
}

export interface LiveHub {
  readonly replicaId: string;
  /** Opens the LISTEN connection and writes this replica's heartbeat row. */
  start(): Promise<void>;
  /** Takes an upgraded socket: replays from `lastEventId` when given, then pushes live events. */
  accept(ws: WebSocket, principal: Principal, filters: SocketFilters, lastEventId: string | undefined): void;
  /** A single-use ticket for a browser, standing for `principal` until it expires. */
  issueTicket(principal: Principal): Promise<{ ticket: string; expiresAt: Date }>;
  /** The caller a ticket stands for, once: undefined when unknown, used or expired. */
  redeemTicket(ticket: string): Promise<Principal | undefined>;
  health(organizationId: string): Promise<ReplicaHealth>;
  /** Sends `nonce` through NOTIFY to the caller's own sockets on every replica; answers how many got it. */
  echo(principal: Principal, nonce: string): Promise<{ delivered: number; replicasAnswered: number; replicasListening: number; roundTripMs: number }>;
  /** Appends a pushed notification to the log (and so to the sockets of every replica). */
  push(organizationId: string, userId: string | null, payload: Record<string, unknown>): Promise<LiveEvent>;
  /** Closes every socket (1001) and the LISTEN connection, and removes the heartbeat row. */
  close(): Promise<void>;
}

export interface LiveHubDeps {
  pool: pg.Pool;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  settings: LiveUpdatesSettings;
}

const hashTicket = (ticket: string) => createHash('sha256').update(ticket).digest('hex');

export function createLiveHub(deps: LiveHubDeps): LiveHub {
  const { pool, log, settings } = deps;
  const replicaId = `rpl_${randomBytes(8).toString('hex')}`;
  const clients = new Set<Client>();
  const byOrganization = new Map<string, Set<Client>>();
  /** Round trips this replica started, waiting for their echo and the other replicas' acks. */
  const echoes = new Map<string, { delivered: number; answered: number; seen: boolean; changed: () => void }>();
  let listener: pg.Client | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let stopping = false;
  let lastPrune = 0;

  function remove(client: Client): void {
    clients.delete(client);
    const set = byOrganization.get(client.principal.organizationId);
    set?.delete(client);
    if (set?.size === 0) byOrganization.delete(client.principal.organizationId);
  }

  function send(client: Client, event: LiveEvent, text: string): void {
    if (client.covered?.(event.id)) return;
    if (client.backlog) {
      client.backlog.push(event);
      return;
    }
    write(client, text);
  }

  function write(client: Client, text: string): void {
    if (client.ws.readyState !== client.ws.OPEN) return;
    // A client that does not read would make this replica hold everything for it: it is cut off instead,
    // and reconnects with its last event id.
    if (client.ws.bufferedAmount > settings.maxBufferedBytes) {
      remove(client);
      // Nothing more is queued for it: the close frame follows what it has not read yet, and ws ends the
      // connection itself if the client never reads that far.
      client.ws.close(CLOSE_CODES.tooSlow, 'client too slow: reconnect with lastEventId');
      return;
    }
    client.ws.send(text);
  }

  const message = (event: LiveEvent) => JSON.stringify({
    id: event.id, type: event.type, organizationId: event.organizationId, deploymentId: event.deploymentId, data: event.payload, createdAt: event.createdAt,
  });

  function dispatch(event: LiveEvent): void {
    const set = byOrganization.get(event.organizationId);
    if (!set) return;
    let text: string | undefined;
    for (const client of set) {
      if (!permits(client.principal, event) || !matches(client, event)) continue;
      text ??= message(event);
      send(client, event, text);
    }
  }

  async function fetchAndDispatch(id: string): Promise<void> {
    const { rows } = await pool.query<Row>(`select ${ROW} from live_event where id = $1`, [id]);
    if (rows[0]) dispatch(fromRow(rows[0]));
  }

  async function notify(payload: unknown): Promise<void> {
    await pool.query('select pg_notify($1, $2)', [CHANNEL, JSON.stringify(payload)]);
  }

  function onEcho({ echo }: Echo): void {
    let delivered = 0;
    for (const client of byOrganization.get(echo.o) ?? []) {
      if (client.principal.userId !== echo.u) continue;
      write(client, JSON.stringify({ type: 'ws.echo', data: { nonce: echo.nonce, echoId: echo.id, replica: replicaId } }));
      delivered += 1;
    }
    if (echo.from === replicaId) {
      const waiting = echoes.get(echo.id);
      if (waiting) {
        waiting.delivered += delivered;
        waiting.seen = true;
        waiting.changed();
      }
    } else {
      notify({ ack: { id: echo.id, to: echo.from, delivered } } satisfies Ack).catch((error: unknown) => log.warn({ err: error }, 'live updates: echo ack not sent'));
    }
  }

  function onNotification(text: string | undefined): void {
    if (!text) return;
    let parsed: Announcement | Echo | Ack;
    try {
      parsed = JSON.parse(text) as Announcement | Echo | Ack;
    } catch {
      return;
    }
    if ('echo' in parsed) return onEcho(parsed);
    if ('ack' in parsed) {
      const waiting = parsed.ack.to === replicaId ? echoes.get(parsed.ack.id) : undefined;
      if (waiting) {
        waiting.delivered += parsed.ack.delivered;
        waiting.answered += 1;
        waiting.changed();
      }
      return;
    }
    if (parsed.p === undefined) {
      fetchAndDispatch(parsed.id).catch((error: unknown) => log.warn({ err: error, id: parsed.id }, 'live updates: event not read'));
      return;
    }
    dispatch({
      id: parsed.id, organizationId: parsed.o!, userId: parsed.u ?? null, type: parsed.t!, deploymentId: parsed.d ?? null, payload: parsed.p,
      createdAt: new Date(parsed.c!).toISOString(),
    });
  }

  async function listen(): Promise<void> {
    const client = new pg.Client(pool.options);
    client.on('notification', (n) => onNotification(n.payload));
    client.on('error', (error) => log.warn({ message: error.message }, 'live updates: LISTEN connection failed'));
    client.on('end', () => {
      if (listener !== client || stopping) return;
      listener = undefined;
      // Events announced while it was down never reach this replica: its clients are told to catch up.
      for (const c of clients) write(c, JSON.stringify({ type: 'ws.resync', data: { reason: 'listener_restarted', message: 'Events may have been missed: reconnect with lastEventId, or refetch.' } }));
      setTimeout(() => listen().catch((error: unknown) => log.warn({ err: error }, 'live updates: LISTEN reconnect failed')), 1000).unref();
    });
    await client.connect();
    await client.query(`listen ${CHANNEL}`);
    if (stopping) {
      await client.end();
      return;
    }
    listener = client;
  }

  async function beat(): Promise<void> {
    const organizations: Record<string, number> = {};
    for (const [organizationId, set] of byOrganization) organizations[organizationId] = set.size;
    await pool.query(
      `insert into live_replica (id, started_at, seen_at, connections, organizations) values ($1, now(), now(), $2, $3::jsonb)
       on conflict (id) do update set seen_at = now(), connections = excluded.connections, organizations = excluded.organizations`,
      [replicaId, clients.size, JSON.stringify(organizations)]);
    // Bounded log: by age and by count; any replica may prune, at most once a minute each.
    if (Date.now() - lastPrune > 60_000) {
      lastPrune = Date.now();
      await pool.query(`delete from live_event where created_at < now() - make_interval(secs => $1)`, [settings.retentionSeconds]);
      await pool.query(`delete from live_event where id <= (select max(id) from live_event) - $1`, [settings.maxEvents]);
      await pool.query(`delete from live_ticket where expires_at < now() - interval '1 hour'`);
      await pool.query(`delete from live_replica where seen_at < now() - interval '1 day'`);
    }
  }

  function tick(): void {
    for (const client of clients) {
      // No pong since the last ping: the peer is gone (or its network is).
      if (!client.alive) {
        remove(client);
        client.ws.terminate();
        continue;
      }
      client.alive = false;
      client.ws.ping();
    }
    beat().catch((error: unknown) => log.warn({ err: error }, 'live updates: heartbeat row not written'));
  }

  async function replay(client: Client, lastEventId: string): Promise<void> {
    const { organizationId } = client.principal;
    const bounds = await pool.query<{ min_id: string | null; last_value: string }>(
      `select (select min(id)::text from live_event) as min_id, (select last_value::text from live_event_id_seq) as last_value`);
    const { min_id: minId, last_value: lastValue } = bounds.rows[0]!;
    const last = BigInt(lastEventId);
    // Events after the client's were pruned (or never logged here): it must refetch what it shows.
    const tooOld = minId === null ? last < BigInt(lastValue) && BigInt(lastValue) > 1n : last + 1n < BigInt(minId);
    const { rows } = tooOld ? { rows: [] as Row[] } : await pool.query<Row>(
      `select ${ROW} from live_event where organization_id = $1 and id > $2 order by live_event.id limit $3`, [organizationId, lastEventId, settings.replayLimit + 1]);
    const tooMany = rows.length > settings.replayLimit;
    if (tooOld || tooMany) {
      // The client refetches what it shows: every event of its organization logged by now is in that refetch.
      const { rows: [latest] } = await pool.query<{ id: string | null }>(`select max(id)::text as id from live_event where organization_id = $1`, [organizationId]);
      const upTo = BigInt(latest?.id ?? lastEventId);
      client.covered = (id) => BigInt(id) <= upTo;
      write(client, JSON.stringify({
        type: 'ws.resync',
        data: { reason: tooOld ? 'too_old' : 'too_many', message: tooOld ? 'The events after lastEventId are no longer kept: refetch, then follow live events.' : `More than ${settings.replayLimit} events were missed: refetch, then follow live events.` },
      }));
    } else {
      const replayed = new Set(rows.map((row) => row.id));
      client.covered = (id) => BigInt(id) <= last || replayed.has(id);
      let count = 0;
      for (const row of rows) {
        const event = fromRow(row);
        if (!permits(client.principal, event) || !matches(client, event)) continue;
        write(client, message(event));
        count += 1;
      }
      write(client, JSON.stringify({ type: 'ws.replayed', data: { count, lastEventId: rows.at(-1)?.id ?? lastEventId } }));
    }
    const backlog = client.backlog ?? [];
    client.backlog = undefined;
    for (const event of backlog) send(client, event, message(event));
  }

  return {
    replicaId,

    async start() {
      await listen();
      await beat();
      heartbeat = setInterval(tick, settings.heartbeatMs);
      heartbeat.unref();
    },

    accept(ws, principal, filters, lastEventId) {
      const client: Client = {
        ws, principal, alive: true,
        deploymentIds: filters.deploymentIds?.length ? new Set(filters.deploymentIds) : undefined,
        types: filters.types?.length ? filters.types : undefined,
        backlog: lastEventId === undefined ? undefined : [],
        covered: undefined,
      };
      if (stopping) {
        ws.close(CLOSE_CODES.goingAway, 'server stopping');
        return;
      }
      clients.add(client);
      let set = byOrganization.get(principal.organizationId);
      if (!set) byOrganization.set(principal.organizationId, set = new Set());
      set.add(client);
      ws.on('pong', () => { client.alive = true; });
      ws.on('close', () => remove(client));
      ws.on('error', () => remove(client));
      // Client messages carry nothing this server acts on; reading them keeps the socket flowing.
      ws.on('message', () => undefined);
      write(client, JSON.stringify({ type: 'ws.ready', data: { replica: replicaId, heartbeatSeconds: settings.heartbeatMs / 1000, filters } }));
      if (lastEventId !== undefined) {
        replay(client, lastEventId).catch((error: unknown) => {
          log.warn({ err: error }, 'live updates: replay failed');
          remove(client);
          ws.close(1011, 'replay failed: reconnect');
        });
      }
    },

    async issueTicket(principal) {
      const ticket = `wst_${randomBytes(24).toString('base64url')}`;
      const expiresAt = new Date(Date.now() + settings.ticketSeconds * 1000);
      await pool.query(
        `insert into live_ticket (id, created_at, organization_id, user_id, principal, expires_at) values ($1, now(), $2, $3, $4::jsonb, $5)`,
        [hashTicket(ticket), principal.organizationId, principal.userId, JSON.stringify(principal), expiresAt]);
      return { ticket, expiresAt };
    },

    async redeemTicket(ticket) {
      // One statement: two replicas redeeming the same ticket at once cannot both win.
      const { rows } = await pool.query<{ principal: Principal }>(
        `update live_ticket set used_at = now() where id = $1 and used_at is null and expires_at > now() returning principal`, [hashTicket(ticket)]);
      return rows[0]?.principal;
    },

    async health(organizationId) {
      const fresh = `seen_at > now() - make_interval(secs => $1)`;
      const { rows } = await pool.query<{ replicas: number; organization: number | null; last_event_id: string | null }>(
        `select (select count(*)::int from live_replica where ${fresh}) as replicas,
                (select sum(coalesce((organizations->>$2)::int, 0))::int from live_replica where ${fresh} and id <> $3) as organization,
                (select max(id)::text from live_event where organization_id = $2) as last_event_id`,
        [(settings.heartbeatMs * 3) / 1000, organizationId, replicaId]);
      const here = byOrganization.get(organizationId)?.size ?? 0;
      const row = rows[0]!;
      return {
        replica: replicaId,
        listening: listener !== undefined,
        heartbeatSeconds: settings.heartbeatMs / 1000,
        connections: { replica: clients.size, organization: (row.organization ?? 0) + here, organizationOnThisReplica: here },
        replicas: Math.max(row.replicas, listener ? 1 : 0),
        lastEventId: row.last_event_id,
      };
    },

    async echo(principal, nonce) {
      const started = performance.now();
      const { rows } = await pool.query<{ count: number }>(
        `select count(*)::int as count from live_replica where seen_at > now() - make_interval(secs => $1) and id <> $2`, [(settings.heartbeatMs * 3) / 1000, replicaId]);
      const others = rows[0]!.count;
      const id = `wse_${randomString(20)}`;
      const state = { delivered: 0, answered: 0, seen: false, changed: () => undefined as void };
      const done = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        state.changed = () => {
          if (state.seen && state.answered >= others) {
            clearTimeout(timer);
            resolve();
          }
        };
      });
      echoes.set(id, state);
      try {
        await notify({ echo: { id, o: principal.organizationId, u: principal.userId, nonce, from: replicaId } } satisfies Echo);
        await done;
      } finally {
        echoes.delete(id);
      }
      return { delivered: state.delivered, replicasAnswered: state.answered + (state.seen ? 1 : 0), replicasListening: others + (listener ? 1 : 0), roundTripMs: Math.round(performance.now() - started) };
    },

    async push(organizationId, userId, payload) {
      const { rows } = await pool.query<Row>(
        `insert into live_event (organization_id, user_id, type, payload) values ($1, $2, 'notification.pushed', $3::jsonb) returning ${ROW}`,
        [organizationId, userId, JSON.stringify(payload)]);
      return fromRow(rows[0]!);
    },

    async close() {
      if (stopping) return;
      stopping = true;
      clearInterval(heartbeat);
      for (const client of clients) {
        client.ws.close(CLOSE_CODES.goingAway, 'server stopping');
        client.ws.terminate();
      }
      clients.clear();
      byOrganization.clear();
      const closing = listener;
      listener = undefined;
      if (closing) await endClient(closing);
      await pool.query('delete from live_replica where id = $1', [replicaId]).catch(() => undefined);
    },
  };
}
