// Live updates: GET /v1/ws (the socket), POST /v1/ws/tickets (a browser's way in), GET|POST /v1/ws/health
// (the service's state; a round trip through the fan-out) and POST /v1/notifications/ws (a notification
// pushed to open sockets). The socket carries what the REST routes would show the same credential: deployment
// events with deployments:read, alert events with alerts:read, the caller's own notifications with profile:read.
import type pg from 'pg';
import { BadRequestError, ForbiddenError, NotFoundError, UpgradeRequiredError } from '../core/errors.ts';
import { defineRoute, type Route } from '../http/routes.ts';
import {
  HealthQuery, HealthView, LiveSocketQuery, PushedNotificationView, PushNotificationRequest, RoundTripRequest, RoundTripView, SocketMessage, TicketView,
} from './schemas.ts';
import { SOCKET_PATH, SOCKET_PERMISSION, UPGRADE_HEADER, type LiveUpdatesService } from './service.ts';

const common = { tag: 'Live updates', resourceType: 'live_socket' } as const;

export function liveUpdatesRoutes(live: LiveUpdatesService, pool: pg.Pool): Route[] {
  return [
    defineRoute({
      ...common, permission: SOCKET_PERMISSION, method: 'GET', path: SOCKET_PATH, operationId: 'openLiveSocket',
      summary: 'Opens a WebSocket of your organization\'s live events (deployment status and events, alerts, your notifications), filtered by deployment ids and types; replays what you missed after lastEventId. Browsers use a ticket from POST /v1/ws/tickets instead of Authorization. A request without `Upgrade: websocket` is 426',
      query: LiveSocketQuery, response: SocketMessage, successStatus: 101, errors: [426],
      handle: async ({ query, header, state }) => {
        const pending = live.claim(header(UPGRADE_HEADER));
        if (!pending) throw new UpgradeRequiredError('GET /v1/ws opens a WebSocket: connect with a WebSocket client (Upgrade: websocket)', {}, { Upgrade: 'websocket' });
        const lastEventHeader = header('Last-Event-ID');
        if (lastEventHeader && !/^\d{1,18}$/.test(lastEventHeader)) throw new BadRequestError('Invalid header Last-Event-ID: must be an event id (digits)', { header: 'Last-Event-ID' });
        live.upgrade(pending, state.principal!, { deploymentIds: query.deploymentIds, types: query.types }, query.lastEventId ?? (lastEventHeader || undefined));
        return { data: null };
      },
    }),
    defineRoute({
      ...common, permission: SOCKET_PERMISSION, method: 'POST', path: '/v1/ws/tickets', operationId: 'createLiveSocketTicket',
      summary: 'A single-use ticket, valid for KILN_WS_TICKET_SECONDS, that opens GET /v1/ws as you (for browsers, which cannot set headers on a socket)',
      response: TicketView, successStatus: 201,
      handle: async ({ state }) => {
        const principal = state.principal!;
        const { ticket, expiresAt } = await live.hub.issueTicket(principal);
        return { data: { ticket, expiresAt: expiresAt.toISOString(), url: `${SOCKET_PATH}?orgId=${principal.organizationId}&ticket=${ticket}` } };
      },
    }),
    defineRoute({
      ...common, permission: 'organization:read', method: 'GET', path: '/v1/ws/health', operationId: 'getLiveSocketHealth',
      summary: 'The socket service\'s state: whether this replica listens for events, open sockets (this replica\'s, your organization\'s on every replica), replicas listening, your latest event id',
      query: HealthQuery, response: HealthView,
      handle: async ({ state }) => {
        const health = await live.hub.health(state.principal!.organizationId);
        return { data: { status: health.listening ? 'ok' : 'degraded', ...health } };
      },
    }),
    defineRoute({
      ...common, permission: SOCKET_PERMISSION, method: 'POST', path: '/v1/ws/health', operationId: 'testLiveSocket',
      summary: 'A round trip: sends the nonce through the fan-out to your own open sockets on every replica (a `ws.echo` message) and answers how many got it',
      body: RoundTripRequest, response: RoundTripView,
      handle: async ({ body, state }) => ({ data: { nonce: body.nonce, ...await live.hub.echo(state.principal!, body.nonce) } }),
    }),
    defineRoute({
      ...common, resourceType: 'notification', permission: 'organization:write', method: 'POST', path: '/v1/notifications/ws', operationId: 'pushLiveNotification',
      summary: 'Pushes a notification (`notification.pushed`) to the open sockets of one member or of the whole organization: owners and admins for their own organization, platform administrators for any',
      body: PushNotificationRequest, response: PushedNotificationView, errors: [404],
      handle: async ({ body, state }) => {
        const principal = state.principal!;
        const organizationId = body.organizationId ?? principal.organizationId;
        if (organizationId !== principal.organizationId && !principal.platformAdmin) throw new ForbiddenError('Only platform administrators push to another organization');
        // Outside the caller's row-level scope: a platform administrator names any organization.
        const { rows } = await pool.query<{ organization: boolean; member: boolean }>(
          `select exists (select 1 from organization where id = $1) as organization,
                  exists (select 1 from membership where organization_id = $1 and user_id = $2) as member`, [organizationId, body.userId ?? '']);
        if (!rows[0]!.organization) throw new NotFoundError('Organization not found');
        if (body.userId !== undefined && !rows[0]!.member) throw new NotFoundError('User not found in this organization');
        const event = await live.hub.push(organizationId, body.userId ?? null, { title: body.title, message: body.message, severity: body.severity, from: principal.userId });
        return { data: { eventId: event.id, organizationId, userId: event.userId, createdAt: event.createdAt } };
      },
    }),
  ];
}
