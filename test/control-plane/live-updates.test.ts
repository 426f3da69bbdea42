// Live updates: GET /v1/ws (a WebSocket of the organization's events, through every replica), its browser
// tickets, GET|POST /v1/ws/health and POST /v1/notifications/ws. Events are caused as users and the worker
// cause them: through the API, or written to the tables the worker writes.
import test from 'ava';
import WebSocket, { type ClientOptions } from 'ws';
import { randomString } from '../../lib/ids.ts';
import { createStatusStore } from '../../workflows/deployment/status-store.ts';
import type { LiveUpdatesSettings } from '../../control-plane/config.ts';
import { addMember, createApiKey, signup, signupWithDeployment, startTestApi, type TestApi } from '../support/control-plane.ts';
import { signupAdmin } from '../support/admin.ts';
import { eventually } from '../support/eventually.ts';

/** Replica A and replica B: two apps on one database. */
let api: TestApi;
let apiB: TestApi;
/** A replica of its own database with a small send buffer and replay limit. */
let tight: TestApi;
const TIGHT: LiveUpdatesSettings = { heartbeatMs: 60_000, maxBufferedBytes: 16 * 1024, replayLimit: 50, retentionSeconds: 3600, maxEvents: 100_000, ticketSeconds: 30 };

test.before(async () => {
  api = await startTestApi(import.meta.filename);
  apiB = await startTestApi(import.meta.filename, { databaseUrl: api.databaseUrl });
  tight = await startTestApi(`${import.meta.filename}-tight`, { config: { liveUpdates: TIGHT } });
});
test.after.always(async () => {
  await apiB?.close();
  await api?.close();
  await tight?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read message fields freely
type Message = { id?: string; type: string; organizationId?: string; deploymentId?: string | null; data: any; createdAt?: string };

interface Socket {
  ws: WebSocket;
  messages: Message[];
  pings: number;
  closed: Promise<{ code: number; reason: string }>;
  /** The first message (in arrival order) that `match` accepts, once it has arrived. */
  next(what: string, match: (m: Message) => boolean): Promise<Message>;
  /** The events (not ws.* control messages) received so far. */
  events(): Message[];
}

const wsUrl = (target: TestApi, query: string) => `${target.url.replace(/^http/, 'ws')}/v1/ws?${query}`;

/** Opens a socket; resolves once it is open, rejects with the HTTP status of a refused upgrade. */
function open(target: TestApi, query: string, options: ClientOptions & { token?: string } = {}): Promise<Socket> {
  const { token, ...rest } = options;
  const ws = new WebSocket(wsUrl(target, query), { ...rest, headers: { ...rest.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  const socket: Socket = {
    ws, messages: [], pings: 0,
    closed: new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) }))),
    next: (what, match) => eventually(what, () => socket.messages.find(match)),
    events: () => socket.messages.filter((m) => !m.type.startsWith('ws.')),
  };
  ws.on('message', (data) => socket.messages.push(JSON.parse(String(data)) as Message));
  ws.on('ping', () => { socket.pings += 1; });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(socket));
    ws.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => { body += String(chunk); });
      response.on('end', () => reject(Object.assign(new Error(`refused: ${response.statusCode}`), { status: response.statusCode, body: body ? JSON.parse(body) : undefined })));
    });
    ws.once('error', (error) => reject(error));
  });
}

/** The HTTP status (and body) of an upgrade the server refuses. */
async function refused(target: TestApi, query: string, options: ClientOptions & { token?: string } = {}): Promise<{ status: number; body: { code: string } }> {
  try {
    const socket = await open(target, query, options);
    socket.ws.close();
  } catch (error) {
    const { status, body } = error as { status?: number; body: { code: string } };
    if (status) return { status, body };
    throw error;
  }
  throw new Error('the upgrade was accepted');
}

async function ready(socket: Socket): Promise<Socket> {
  await socket.next('ws.ready', (m) => m.type === 'ws.ready');
  return socket;
}

const setStatus = (target: TestApi, deploymentId: string, status: string) =>
  target.pool.query(`update deployment set status = $2 where id = $1`, [deploymentId, status]);

/** An alert firing, written as the alert evaluation workflow writes it. */
async function fireAlert(target: TestApi, organizationId: string): Promise<string> {
  const suffix = randomString(20);
  await target.pool.query(`insert into alert (id, created_at, organization_id, sequence, name, metric, message, state, started_at, fired_at) values ('alt_' || $2, now(), $1, 0, 'High latency', 'manual', 'p95 above 2 s', 'firing', now(), now())`, [organizationId, suffix]);
  await target.pool.query(`insert into alert_event (id, created_at, organization_id, alert_id, type, payload) values ('ale_' || $2, now(), $1, 'alt_' || $2, 'alert.firing', '{"event":"alert.firing","data":{"name":"High latency"}}')`, [organizationId, suffix]);
  return `alt_${suffix}`;
}

/** A user notification, written as the worker's notifyMembers writes it. */
async function notifyUser(target: TestApi, user: { userId: string; organizationId: string }, deploymentId: string): Promise<string> {
  const id = `unt_${randomString(20)}`;
  await target.pool.query(`insert into user_notification (id, created_at, user_id, organization_id, kind, payload) values ($1, now(), $2, $3, 'deployment.failed', $4::jsonb)`,
    [id, user.userId, user.organizationId, JSON.stringify({ message: 'Deployment chat failed.', deploymentId, deploymentName: 'chat', status: 'failed', reason: 'image pull error' })]);
  return id;
}

test('a script\'s socket receives its organization\'s deployment status changes, deployment events, alerts and its notifications as they happen; another organization\'s never arrive', async (t) => {
  const mine = await signupWithDeployment(api);
  const theirs = await signupWithDeployment(api);
  const socket = await ready(await open(api, `orgId=${mine.organizationId}`, { token: mine.token }));

  await setStatus(api, theirs.id, 'deploying');
  await fireAlert(api, theirs.organizationId);
  await setStatus(api, mine.id, 'deploying');
  const status = await socket.next('my status change', (m) => m.type === 'deployment.status');
  t.like(status, { type: 'deployment.status', organizationId: mine.organizationId, deploymentId: mine.id, data: { id: mine.id, status: 'deploying', previousStatus: 'pending' } });
  t.regex(status.id!, /^\d+$/);

  await api.pool.query(`insert into deployment_event (id, created_at, deployment_id, organization_id, type, generation, payload) values ($1, now(), $2, $3, 'deployment.running', 1, '{"event":"deployment.running"}')`,
    [`evt_${randomString(20)}`, mine.id, mine.organizationId]);
  await socket.next('my deployment event', (m) => m.type === 'deployment.running');
  await fireAlert(api, mine.organizationId);
  await socket.next('my alert', (m) => m.type === 'alert.firing');
  const noticeId = await notifyUser(api, mine, mine.id);
  const notice = await socket.next('my notification', (m) => m.type === 'notification.created');
  t.like(notice.data, { id: noticeId, kind: 'deployment.failed' });
  t.is(notice.deploymentId, mine.id);

  // In the order they were written, and nothing of the other organization's, which was written first.
  t.deepEqual(socket.events().map((m) => m.type), ['deployment.status', 'deployment.running', 'alert.firing', 'notification.created']);
  t.true(socket.events().every((m) => m.organizationId === mine.organizationId));
  t.true(BigInt(socket.events()[0]!.id!) < BigInt(socket.events()[3]!.id!));
  socket.ws.close();
});

test('what the worker writes (its deployment status store, with the notices it sends) reaches sockets on every replica', async (t) => {
  const user = await signupWithDeployment(api);
  const onA = await ready(await open(api, `orgId=${user.organizationId}`, { token: user.token }));
  const onB = await ready(await open(apiB, `orgId=${user.organizationId}`, { token: user.token }));
  // As the worker's recordStatus activity writes, outside any request.
  const store = createStatusStore(api.orm);
  await store.record({ deploymentId: user.id, status: 'deploying', generation: 1, replicas: 0 });
  await store.record({ deploymentId: user.id, status: 'running', event: 'deployment.running', generation: 1, replicas: 1 });
  for (const socket of [onA, onB]) {
    await socket.next('the running notice', (m) => m.type === 'notification.created');
    await socket.next('the running status', (m) => m.data?.status === 'running');
    const seen = socket.events().map((m) => m.type === 'deployment.status' ? `status:${m.data.status}` : m.type);
    // The second edge is one transaction: its three rows arrive together, in the order the ORM flushed them.
    t.is(seen[0], 'status:deploying');
    t.deepEqual(seen.slice(1).sort(), ['deployment.running', 'notification.created', 'status:running']);
    t.is(socket.events().find((m) => m.type === 'notification.created')!.data.kind, 'deployment.running');
    socket.ws.close();
  }
});

test('filters: only the deployments and types asked for', async (t) => {
  const user = await signupWithDeployment(api);
  const other = await api.request('POST', '/v1/deployments', { token: user.token, body: { name: 'second', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' } });
  t.is(other.status, 201);
  const onlyFirst = await ready(await open(api, `orgId=${user.organizationId}&deploymentIds=${user.id}`, { token: user.token }));
  const onlyAlerts = await ready(await open(api, `orgId=${user.organizationId}&types=alert`, { token: user.token }));
  await setStatus(api, other.body.id, 'deploying');
  await fireAlert(api, user.organizationId);
  await setStatus(api, user.id, 'deploying');
  await onlyFirst.next('the first deployment\'s change', (m) => m.type === 'deployment.status');
  await onlyAlerts.next('the alert', (m) => m.type === 'alert.firing');
  await setStatus(api, user.id, 'running');
  await fireAlert(api, user.organizationId);
  await onlyFirst.next('its second change', (m) => m.data?.status === 'running');
  await eventually('the second alert', () => onlyAlerts.events().length === 2);
  t.deepEqual(onlyFirst.events().map((m) => [m.deploymentId, m.data.status]), [[user.id, 'deploying'], [user.id, 'running']]);
  t.deepEqual(onlyAlerts.events().map((m) => m.type), ['alert.firing', 'alert.firing']);
  onlyFirst.ws.close();
  onlyAlerts.ws.close();
});

test('a socket on replica B receives events caused through replica A: a deletion, a pushed notification, a round trip', async (t) => {
  const user = await signupWithDeployment(api);
  const onB = await ready(await open(apiB, `orgId=${user.organizationId}`, { token: user.token }));
  const greeting = onB.messages[0]!;
  const deleted = await api.request('DELETE', `/api/deployments/${user.id}`, { token: user.token });
  t.is(deleted.status, 200);
  const change = await onB.next('the deletion through A', (m) => m.type === 'deployment.status' && m.data.status === 'deleting');
  t.is(change.deploymentId, user.id);

  const pushed = await api.request('POST', '/v1/notifications/ws', { token: user.token, body: { title: 'Maintenance', message: 'The API restarts at 02:00 UTC.', severity: 'warning' } });
  t.is(pushed.status, 200);
  const message = await onB.next('the pushed notification', (m) => m.type === 'notification.pushed');
  t.is(message.id, pushed.body.eventId);
  t.like(message.data, { title: 'Maintenance', severity: 'warning', from: user.userId });

  // The round trip asked of A reaches the caller's socket on B, and A counts it.
  const onA = await ready(await open(api, `orgId=${user.organizationId}`, { token: user.token }));
  const trip = await api.request('POST', '/v1/ws/health', { token: user.token, body: { nonce: 'n-123' } });
  t.is(trip.status, 200);
  t.like(trip.body, { nonce: 'n-123', delivered: 2 });
  t.true(trip.body.replicasAnswered >= 2);
  t.like((await onB.next('the echo on B', (m) => m.type === 'ws.echo')).data, { nonce: 'n-123' });
  t.like((await onA.next('the echo on A', (m) => m.type === 'ws.echo')).data, { nonce: 'n-123' });
  t.not(greeting.data.replica, onA.messages[0]!.data.replica);
  onA.ws.close();
  onB.ws.close();
});

test('a browser\'s ticket opens one socket, once; without a credential, or with a bad ticket, the upgrade is refused', async (t) => {
  const user = await signup(api);
  const issued = await api.request('POST', '/v1/ws/tickets', { token: user.token });
  t.is(issued.status, 201);
  t.regex(issued.body.ticket, /^wst_/);
  t.is(issued.body.url, `/v1/ws?orgId=${user.organizationId}&ticket=${issued.body.ticket}`);
  const query = `orgId=${user.organizationId}&ticket=${issued.body.ticket}`;
  // Presented on replica B: tickets are good on every replica.
  const socket = await ready(await open(apiB, query));
  t.like((await refused(api, query)).body, { code: 'INVALID_API_KEY' });
  t.is((await refused(apiB, query)).status, 401);
  // The socket it opened acts as the user: their notifications come.
  await api.request('POST', '/v1/notifications/ws', { token: user.token, body: { title: 'Hello', message: 'From a script.', userId: user.userId } });
  await socket.next('the user\'s notification', (m) => m.type === 'notification.pushed');
  socket.ws.close();

  t.is((await refused(api, `orgId=${user.organizationId}`)).status, 401);
  t.is((await refused(api, `orgId=${user.organizationId}&ticket=wst_forged`)).status, 401);
  t.is((await refused(api, `orgId=${user.organizationId}`, { token: 'sk_live_not_a_key' })).status, 401);
  // A ticket for another organization than the one named: refused, and used up all the same.
  const other = await signup(api);
  const second = await api.request('POST', '/v1/ws/tickets', { token: user.token });
  t.is((await refused(api, `orgId=${other.organizationId}&ticket=${second.body.ticket}`)).status, 403);
  t.is((await api.request('POST', '/v1/ws/tickets')).status, 401);
});

test('bad input: a plain GET is 426; bad filters, event ids or orgId are 400, before any upgrade', async (t) => {
  const user = await signup(api);
  const plain = await api.request('GET', `/v1/ws?orgId=${user.organizationId}`, { token: user.token });
  t.is(plain.status, 426);
  t.like(plain.body, { code: 'UPGRADE_REQUIRED', statusCode: 426 });
  t.is(plain.headers.get('upgrade'), 'websocket');
  for (const query of [`orgId=${user.organizationId}&types=bogus`, `orgId=${user.organizationId}&deploymentIds=nope`, `orgId=${user.organizationId}&lastEventId=abc`, '']) {
    const refusal = await refused(api, query, { token: user.token });
    t.is(refusal.status, 400, query);
    t.is(refusal.body.code, 'INVALID_REQUEST', query);
  }
  t.is((await refused(api, `orgId=${user.organizationId}`, { token: user.token, headers: { 'last-event-id': 'x' } })).status, 400);
  // A ticket with bad filters is refused before it is spent.
  const issued = await api.request('POST', '/v1/ws/tickets', { token: user.token });
  t.is((await refused(api, `orgId=${user.organizationId}&types=bogus&ticket=${issued.body.ticket}`)).status, 400);
  (await ready(await open(api, `orgId=${user.organizationId}&ticket=${issued.body.ticket}`))).ws.close();
  t.is((await api.request('POST', '/v1/ws/health', { token: user.token, body: {} })).status, 400);
  t.is((await api.request('POST', '/v1/ws/health', { token: user.token, body: { nonce: 'x'.repeat(129) } })).status, 422);
  t.is((await api.request('POST', '/v1/notifications/ws', { token: user.token, body: { message: 'no title' } })).status, 400);
  t.is((await api.request('POST', '/v1/notifications/ws', { token: user.token, body: { title: 't', message: 'm', severity: 'loud' } })).status, 422);
});

test('scopes and roles: a credential gets only what its REST routes would show it, or is refused', async (t) => {
  const owner = await signupWithDeployment(api);
  const deploymentsOnly = await createApiKey(api, owner.token, 'deployments_only');
  const member = await addMember(api, owner.organizationId, 'member');
  const keySocket = await ready(await open(api, `orgId=${owner.organizationId}`, { token: deploymentsOnly.key }));
  const memberSocket = await ready(await open(api, `orgId=${owner.organizationId}`, member.as));
  const ownerSocket = await ready(await open(api, `orgId=${owner.organizationId}`, { token: owner.token }));

  // A notification for the member reaches the member alone; an alert, those who read alerts; a deployment event, all three.
  await notifyUser(api, { userId: member.userId, organizationId: owner.organizationId }, owner.id);
  await fireAlert(api, owner.organizationId);
  await setStatus(api, owner.id, 'deploying');
  await keySocket.next('the status change', (m) => m.type === 'deployment.status');
  await memberSocket.next('the status change', (m) => m.type === 'deployment.status');
  await ownerSocket.next('the status change', (m) => m.type === 'deployment.status');
  t.deepEqual(keySocket.events().map((m) => m.type), ['deployment.status']);
  t.deepEqual(memberSocket.events().map((m) => m.type), ['notification.created', 'alert.firing', 'deployment.status']);
  t.deepEqual(ownerSocket.events().map((m) => m.type), ['alert.firing', 'deployment.status']);
  // The round trip reaches the caller's own sockets only.
  const trip = await api.request('POST', '/v1/ws/health', { ...member.as, body: { nonce: 'mine' } });
  t.is(trip.body.delivered, 1);
  t.false(ownerSocket.messages.some((m) => m.type === 'ws.echo'));

  // A custom role without deployments:read opens no socket and gets no ticket.
  const roleId = `role_${randomString(20)}`;
  await api.pool.query(`insert into custom_role (id, created_at, organization_id, name, permissions, updated_at) values ($1, now(), $2, 'billing clerk', '["profile:read"]', now())`, [roleId, owner.organizationId]);
  const clerk = await addMember(api, owner.organizationId, roleId, 'clerk');
  const refusal = await refused(api, `orgId=${owner.organizationId}`, clerk.as);
  t.is(refusal.status, 403);
  t.is(refusal.body.code, 'INSUFFICIENT_PERMISSIONS');
  t.is((await api.request('POST', '/v1/ws/tickets', clerk.as)).status, 403);
  t.is((await api.request('POST', '/v1/ws/health', { ...clerk.as, body: { nonce: 'x' } })).status, 403);
  // The service's state is the organization's: a deployments-only key may not read it; pushing is for owners and admins.
  t.is((await api.request('GET', `/v1/ws/health?orgId=${owner.organizationId}`, { token: deploymentsOnly.key })).status, 403);
  t.is((await api.request('POST', '/v1/notifications/ws', { ...member.as, body: { title: 't', message: 'm' } })).status, 403);
  t.is((await api.request('POST', '/v1/notifications/ws', { token: deploymentsOnly.key, body: { title: 't', message: 'm' } })).status, 403);
  for (const s of [keySocket, memberSocket, ownerSocket]) s.ws.close();
});

test('another organization: its orgId is refused (403) on the socket and the health route; pushing to it is a platform administrator\'s alone', async (t) => {
  const mine = await signup(api);
  const theirs = await signup(api);
  t.is((await refused(api, `orgId=${theirs.organizationId}`, { token: mine.token })).status, 403);
  t.is((await api.request('GET', `/v1/ws/health?orgId=${theirs.organizationId}`, { token: mine.token })).status, 403);
  const pushed = await api.request('POST', '/v1/notifications/ws', { token: mine.token, body: { title: 't', message: 'm', organizationId: theirs.organizationId } });
  t.is(pushed.status, 403);
  // Another organization's user is unknown in mine.
  t.is((await api.request('POST', '/v1/notifications/ws', { token: mine.token, body: { title: 't', message: 'm', userId: theirs.userId } })).status, 404);

  const admin = await signupAdmin(api);
  const socket = await ready(await open(api, `orgId=${theirs.organizationId}`, { token: theirs.token }));
  const byAdmin = await api.request('POST', '/v1/notifications/ws', { token: admin.token, body: { title: 'Platform', message: 'Maintenance tonight.', organizationId: theirs.organizationId, userId: theirs.userId } });
  t.is(byAdmin.status, 200);
  t.like(byAdmin.body, { organizationId: theirs.organizationId, userId: theirs.userId });
  await socket.next('the administrator\'s notification', (m) => m.type === 'notification.pushed');
  t.is((await api.request('POST', '/v1/notifications/ws', { token: admin.token, body: { title: 't', message: 'm', organizationId: 'org_doesnotexist' } })).status, 404);
  socket.ws.close();
});

test('GET /v1/ws/health: this replica listens, counts the organization\'s sockets on every replica and the replicas listening', async (t) => {
  const user = await signup(api);
  const a = await ready(await open(api, `orgId=${user.organizationId}`, { token: user.token }));
  const b = await ready(await open(apiB, `orgId=${user.organizationId}`, { token: user.token }));
  // B's count reaches A with B's next heartbeat row; A's own is live.
  const health = await api.request('GET', `/v1/ws/health?orgId=${user.organizationId}`, { token: user.token });
  t.is(health.status, 200);
  t.like(health.body, { status: 'ok', listening: true, connections: { organizationOnThisReplica: 1 } });
  t.true(health.body.replicas >= 2);
  t.true(health.body.connections.replica >= 1);
  b.ws.close();
  a.ws.close();
  await b.closed;
  t.is((await api.request('GET', `/v1/ws/health?orgId=${user.organizationId}`)).status, 401);
  t.is((await api.request('GET', '/v1/ws/health', { token: user.token })).status, 400);
  t.is((await api.request('POST', '/v1/ws/health', { body: { nonce: 'x' } })).status, 401);
  t.is((await api.request('POST', '/v1/notifications/ws', { body: { title: 't', message: 'm' } })).status, 401);
});

test('a client that reconnects with the last event id it saw gets what it missed, then live events; a gap too old is said', async (t) => {
  const user = await signupWithDeployment(api);
  const first = await ready(await open(api, `orgId=${user.organizationId}`, { token: user.token }));
  await setStatus(api, user.id, 'deploying');
  // Matched by status: the creation's own event may reach a socket opened just after it, on a busy machine.
  const seen = await first.next('the first change', (m) => m.type === 'deployment.status' && m.data?.status === 'deploying');
  first.ws.close();
  await first.closed;

  await setStatus(api, user.id, 'running');
  await fireAlert(api, user.organizationId);
  const again = await open(api, `orgId=${user.organizationId}&lastEventId=${seen.id}`, { token: user.token });
  const replayed = await again.next('the replay\'s end', (m) => m.type === 'ws.replayed');
  t.is(replayed.data.count, 2);
  t.deepEqual(again.events().map((m) => m.type), ['deployment.status', 'alert.firing']);
  t.is(again.events()[0]!.data.status, 'running');
  await setStatus(api, user.id, 'stopped');
  await again.next('a live change after the replay', (m) => m.data?.status === 'stopped');
  again.ws.close();

  // The header says the same; filters apply to the replay too.
  const byHeader = await open(api, `orgId=${user.organizationId}&types=alert`, { token: user.token, headers: { 'last-event-id': seen.id! } });
  await byHeader.next('the replay\'s end', (m) => m.type === 'ws.replayed');
  t.deepEqual(byHeader.events().map((m) => m.type), ['alert.firing']);
  byHeader.ws.close();
});

test('a gap older than the log keeps, or longer than the replay limit, is said so that the client refetches', async (t) => {
  const user = await signup(tight);
  const push = (title: string) => tight.request('POST', '/v1/notifications/ws', { token: user.token, body: { title, message: 'm' } });
  // A socket that sees both pushes live: the replica's listener has passed them on before the reconnects below,
  // so neither can reach those sockets late as a live event (pg_notify is delivered asynchronously).
  const watcher = await open(tight, `orgId=${user.organizationId}`, { token: user.token });
  const first = (await push('one')).body.eventId as string;
  const second = (await push('two')).body.eventId as string;
  await watcher.next('the second push, live', (m) => m.data?.title === 'two');
  watcher.ws.close();
  // More than TIGHT.replayLimit missed.
  await tight.pool.query(`insert into live_event (organization_id, type, payload) select $1, 'notification.pushed', '{}' from generate_series(1, 60)`, [user.organizationId]);
  const tooMany = await open(tight, `orgId=${user.organizationId}&lastEventId=${first}`, { token: user.token });
  t.like((await tooMany.next('the resync', (m) => m.type === 'ws.resync')).data, { reason: 'too_many' });
  t.deepEqual(tooMany.events(), []);
  tooMany.ws.close();
  // Pruned: the events after `first` are gone from the log.
  await tight.pool.query(`delete from live_event where id <= $1`, [second]);
  const tooOld = await open(tight, `orgId=${user.organizationId}&lastEventId=${first}`, { token: user.token });
  t.like((await tooOld.next('the resync', (m) => m.type === 'ws.resync')).data, { reason: 'too_old' });
  // It still follows live events.
  await push('three');
  await tooOld.next('a live event', (m) => m.data?.title === 'three');
  tooOld.ws.close();
});

// Serial (before the others): it moves the log's id sequence, and no other insert may come between its two.
test.serial('a replay keeps the order events happened in when their ids grow a digit (…9 before …10)', async (t) => {
  const user = await signupWithDeployment(api);
  const insert = (title: string) => api.pool.query<{ id: string }>(
    `insert into live_event (organization_id, type, payload) values ($1, 'notification.pushed', jsonb_build_object('title', $2::text)) returning id::text`, [user.organizationId, title]);
  const { rows: [seen] } = await insert('seen');
  // The next two ids are 10^k - 1 and 10^k: as text, the second sorts first.
  const nines = 10n ** BigInt(seen!.id.length + 1) - 1n;
  await api.pool.query(`select setval('live_event_id_seq', $1)`, [String(nines - 1n)]);
  const { rows: [first] } = await insert('first');
  const { rows: [second] } = await insert('second');
  t.deepEqual([first!.id, second!.id], [String(nines), String(nines + 1n)]);
  const again = await open(api, `orgId=${user.organizationId}&lastEventId=${seen!.id}`, { token: user.token });
  await again.next('the replay\'s end', (m) => m.type === 'ws.replayed');
  t.deepEqual(again.events().map((m) => m.data.title), ['first', 'second']);
  again.ws.close();
});

// Serial (before the others): it prunes the whole log of its database.
test.serial('the log stays bounded: a replica prunes events older than the retention, and the oldest beyond the count', async (t) => {
  const user = await signup(tight);
  await tight.pool.query(`insert into live_event (organization_id, type, payload) select $1, 'notification.pushed', '{}' from generate_series(1, 1200)`, [user.organizationId]);
  // Among the newest by id, but older than the retention (an hour): pruned for its age alone.
  const { rows: [old] } = await tight.pool.query(`insert into live_event (organization_id, type, payload, created_at) values ($1, 'notification.pushed', '{}', now() - interval '2 hours') returning id::text`, [user.organizationId]);
  const { rows: [newest] } = await tight.pool.query(`insert into live_event (organization_id, type, payload) values ($1, 'notification.pushed', '{}') returning id::text`, [user.organizationId]);
  // A replica prunes as it starts, then at most once a minute.
  const pruner = await startTestApi(import.meta.filename, { databaseUrl: tight.databaseUrl, config: { liveUpdates: { ...TIGHT, maxEvents: 1000 } } });
  t.teardown(() => pruner.close());
  const { rows } = await tight.pool.query(`select count(*)::int as count, count(*) filter (where id = $1)::int as old, max(id)::text as newest from live_event`, [old.id]);
  t.true(rows[0].count <= 1000);
  t.is(rows[0].old, 0);
  t.is(rows[0].newest, newest.id);
});

// Serial (before the others): a heartbeat this quick needs a test process that is not busy elsewhere.
test.serial('heartbeats: the server pings every interval; a peer that stops answering is dropped', async (t) => {
  // A replica pinging five times a second.
  const pulse = await startTestApi(import.meta.filename, { databaseUrl: tight.databaseUrl, config: { liveUpdates: { ...TIGHT, heartbeatMs: 200 } } });
  t.teardown(() => pulse.close());
  const user = await signup(pulse);
  const healthy = await ready(await open(pulse, `orgId=${user.organizationId}`, { token: user.token }));
  const dead = await ready(await open(pulse, `orgId=${user.organizationId}`, { token: user.token, autoPong: false }));
  const closed = await dead.closed;
  // Terminated without a close frame: the peer is presumed gone.
  t.is(closed.code, 1006);
  t.true(dead.pings >= 1);
  await eventually('three pings answered', () => healthy.pings >= 3);
  t.is(healthy.ws.readyState, WebSocket.OPEN);
  healthy.ws.close();
});

test('a client too slow to read is closed with 4008 rather than buffered without end', async (t) => {
  const user = await signup(tight);
  const slow = await ready(await open(tight, `orgId=${user.organizationId}`, { token: user.token }));
  slow.ws.pause();
  const big = 'x'.repeat(6000);
  const held = async () => (await tight.request('GET', `/v1/ws/health?orgId=${user.organizationId}`, { token: user.token })).body.connections.organizationOnThisReplica as number;
  // The kernel's socket buffers take the first megabytes; then the server's own buffer passes the limit.
  for (let batch = 0; batch < 40 && await held() > 0; batch += 1) {
    await tight.pool.query(`insert into live_event (organization_id, type, payload) select $1, 'notification.pushed', jsonb_build_object('title', 't', 'message', $2::text, 'n', n) from generate_series(1, 200) n`, [user.organizationId, big]);
  }
  await eventually('the slow socket cut off', async () => (await held()) === 0);
  slow.ws.resume();
  t.is((await slow.closed).code, 4008);
  // It was cut off well before everything written reached it.
  t.true(slow.events().length < 40 * 200);
});

test('stopping a replica closes its sockets with 1001, and its listener, so it stops cleanly', async (t) => {
  const user = await signup(api);
  const replica = await startTestApi(import.meta.filename, { databaseUrl: api.databaseUrl });
  const socket = await ready(await open(replica, `orgId=${user.organizationId}`, { token: user.token }));
  await replica.close();
  t.is((await socket.closed).code, 1001);
  // Its heartbeat row is gone: the others no longer count it.
  const { rows } = await api.pool.query(`select id from live_replica where id = $1`, [socket.messages[0]!.data.replica]);
  t.deepEqual(rows, []);
});
