import { z } from 'zod';
import { ORGANIZATION_ID_PATTERN } from '../../lib/ids.ts';
import { orgIdQuery } from '../core/organization-query.ts';
import { SEVERITIES } from '../notifications/notification.entity.ts';

/** The event types a socket carries, and the categories a filter may name instead. */
export const LIVE_EVENT_TYPES = [
  'deployment.status', 'deployment.created', 'deployment.running', 'deployment.failed', 'deployment.scaled', 'deployment.recovered', 'deployment.stopped', 'deployment.deleted',
  'alert.firing', 'alert.resolved', 'notification.created', 'notification.pushed',
] as const;
const CATEGORIES = ['deployment', 'alert', 'notification'] as const;
const FILTERABLE = new Set<string>([...LIVE_EVENT_TYPES, ...CATEGORIES]);

/** A comma-separated list, each item checked. */
const list = (item: RegExp, what: string) => z.string().max(4000)
  .transform((value) => value.split(',').map((s) => s.trim()).filter(Boolean))
  .refine((items) => items.length <= 100, 'at most 100 items')
  .refine((items) => items.every((i) => item.test(i)), `each item must be ${what}`);

const eventId = z.string().regex(/^\d{1,18}$/, 'must be an event id (digits)');

export const LiveSocketQuery = z.object({
  ...orgIdQuery,
  deploymentIds: list(/^dep_[0-9A-Za-z]{1,64}$/, 'a deployment id').optional()
    .meta({ description: 'Comma-separated deployment ids: only their events (alerts and notifications about no deployment are left out).', example: 'dep_0123456789abcdefghij' }),
  types: list(/^[a-z.]{1,40}$/, 'an event type').refine((items) => items.every((i) => FILTERABLE.has(i)), `each item must be one of ${[...FILTERABLE].join(', ')}`).optional()
    .meta({ description: `Comma-separated event types or categories (${CATEGORIES.join(', ')}): only those.`, example: 'deployment,alert.firing' }),
  lastEventId: eventId.optional()
    .meta({ description: 'The last event id this client saw (or the Last-Event-ID header): the events after it are replayed first, up to KILN_WS_REPLAY_LIMIT; older or more: a `ws.resync` message says to refetch.' }),
  ticket: z.string().regex(/^wst_[\w-]{1,100}$/, 'must be a ticket from POST /v1/ws/tickets').optional()
    .meta({ description: 'For browsers, which cannot send Authorization on a socket: a single-use ticket from POST /v1/ws/tickets instead of the header.' }),
});

export const SocketRefusal = z.object({
  error: z.string(), message: z.string(), code: z.string(), statusCode: z.number().int(),
}).meta({ id: 'SocketRefusal' });

export const SocketMessage = z.object({
  id: z.string().optional().meta({ description: 'The log id of an event (absent on ws.* control messages): reconnect with the last one seen as lastEventId.' }),
  type: z.string().meta({ description: `An event type (${LIVE_EVENT_TYPES.join(', ')}) or a control message: ws.ready, ws.replayed, ws.resync (refetch), ws.echo.` }),
  organizationId: z.string().optional(),
  deploymentId: z.string().nullable().optional(),
  data: z.unknown(),
  createdAt: z.string().optional(),
}).meta({ id: 'LiveSocketMessage', description: 'One JSON text message on the socket (never sent as an HTTP answer: the upgrade answers 101).' });

export const TicketView = z.object({
  ticket: z.string().meta({ example: 'wst_0123456789abcdefghijklmnopqrstuv' }),
  expiresAt: z.iso.datetime(),
  url: z.string().meta({ description: 'Path and query to open the socket with (add the filters you want).', example: '/v1/ws?orgId=org_0123456789abcdefghij&ticket=wst_...' }),
}).meta({ id: 'LiveSocketTicket' });

export const HealthQuery = z.object({ ...orgIdQuery });

export const HealthView = z.object({
  status: z.enum(['ok', 'degraded']).meta({ description: 'degraded: this replica is not listening for events (its sockets miss them until it is).' }),
  replica: z.string().meta({ description: 'The replica that answered.' }),
  listening: z.boolean(),
  heartbeatSeconds: z.number(),
  connections: z.object({
    replica: z.number().int().meta({ description: 'Open sockets on this replica (every organization).' }),
    organization: z.number().int().meta({ description: 'Your organization\'s open sockets on every replica (the others\' as of their last heartbeat).' }),
    organizationOnThisReplica: z.number().int(),
  }),
  replicas: z.number().int().meta({ description: 'Replicas listening (heartbeat within three intervals).' }),
  lastEventId: z.string().nullable().meta({ description: 'Your organization\'s latest event id in the log.' }),
}).meta({ id: 'LiveSocketHealth' });

export const RoundTripRequest = z.strictObject({
  nonce: z.string().min(1).max(128).meta({ description: 'Echoed to your own open sockets as a `ws.echo` message.' }),
}).meta({ id: 'LiveSocketRoundTripRequest' });

export const RoundTripView = z.object({
  nonce: z.string(),
  delivered: z.number().int().meta({ description: 'Your open sockets (on every replica) the echo reached.' }),
  replicasAnswered: z.number().int(),
  replicasListening: z.number().int(),
  roundTripMs: z.number().int(),
}).meta({ id: 'LiveSocketRoundTrip' });

export const PushNotificationRequest = z.strictObject({
  title: z.string().trim().min(1).max(200),
  message: z.string().trim().min(1).max(2000),
  severity: z.enum(SEVERITIES).default('info'),
  organizationId: z.string().regex(ORGANIZATION_ID_PATTERN, 'must be an organization id').optional()
    .meta({ description: 'Whose sockets; absent: your own organization. Another organization: platform administrators only.' }),
  userId: z.string().max(64).optional().meta({ description: 'Only this member\'s sockets; absent: every member who reads notifications.' }),
}).meta({ id: 'PushNotificationRequest' });

export const PushedNotificationView = z.object({
  eventId: z.string().meta({ description: 'The event\'s id in the log (what its sockets receive as `id`).' }),
  organizationId: z.string(),
  userId: z.string().nullable(),
  createdAt: z.iso.datetime(),
}).meta({ id: 'PushedNotification' });

export type LiveSocketInput = z.output<typeof LiveSocketQuery>;
