// Capacity follows the lack of demand: a `local` cluster's pool nodes that ran no Kiln replica for the idle time are
// drained and removed by the cluster's workflow (shrinkNodePool, then the pool's `pulumi up`), down to the pool's
// minimum, and a node running a replica never is. Each capacity decision (a growth for a deployment, a shrink) is an
// event of the cluster that platform administrators read and receive as a webhook; a growth also reaches the
// deployment's organization as deployment.capacity_requested. The API, a Temporal dev server and workers of this
// file's own (the activities workflows/deployment/queue.ts and workflows/webhooks/queue.ts ship), on a local
// cluster started with no nodes.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import anyTest, { type TestFn } from 'ava';
import { Webhook } from 'standardwebhooks';
import { desiredClusterSignal } from '../../workflows/contract/cluster.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { DRAINED_FOR_ANNOTATION, poolShrink } from '../../workflows/cluster/pool-shrink.ts';
import { signup } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { activitiesRun as activitiesOf, poolNodes as nodesOf, startLocalClusterHarness, type LocalClusterHarness } from '../support/local-cluster.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';

installTestRuntime();

interface Hook { event: string; data: Record<string, unknown> }
interface Context extends LocalClusterHarness {
  clusterId: string;
  user: Awaited<ReturnType<typeof signup>>;
  /** What the administrator's and the user's receivers got, verified with their subscriptions' secrets. */
  received: { admin: Hook[]; user: Hook[] };
  closeReceiver: () => void;
}
const test = anyTest as TestFn<Context>;

const IDLE_MS = 8000;
const L4 = { name: 'l4', gpuType: 'nvidia-l4', minSize: 1, desiredSize: 1, maxSize: 3, gpusPerNode: 1 };

test.before(async (t) => {
  const harness = await startLocalClusterHarness(import.meta.filename, { growPools: true, unschedulableGraceMs: 2000, poolIdleMs: IDLE_MS });
  const { api, admin, kubeconfig } = harness;
  t.context = harness as Context; // stopped by the after hook even if the rest of this set-up fails
  const user = await signup(api);
  const secrets: Record<string, string> = {};
  const received: Context['received'] = { admin: [], user: [] };
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      const who = req.url === '/admin' ? 'admin' : 'user';
      received[who].push(new Webhook(secrets[who]!).verify(body, req.headers as Record<string, string>) as Hook);
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.context.closeReceiver = () => receiver.close();
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const adminHook = await api.request('POST', '/api/webhooks', { token: admin, body: { url: `${base}/admin`, events: ['cluster.pool_grown', 'cluster.pool_shrunk'] } });
  const userHook = await api.request('POST', '/api/webhooks', { token: user.token, body: { url: `${base}/user`, events: ['deployment.capacity_requested'] } });
  if (adminHook.status !== 201 || userHook.status !== 201) throw new Error(`subscriptions: ${adminHook.status} ${userHook.status}`);
  secrets.admin = adminHook.body.data.secret;
  secrets.user = userHook.body.data.secret;
  const cluster = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'local', name: 'local', kubeconfig, nodePools: [L4] } });
  t.context = { ...harness, clusterId: cluster.body.id, user, received, closeReceiver: () => receiver.close() };
  await clusterReady(t);
});
test.after.always(async (t) => {
  await t.context.stop?.();
  t.context.closeReceiver?.();
});

const clusterReady = (t: { context: Context }) => eventually('the cluster ready', async () => {
  const res = await t.context.api.request('GET', `/v1/admin/clusters/${t.context.clusterId}`, { token: t.context.admin });
  if (res.body.status === 'failed') throw new Error(`the cluster failed: ${res.body.failureReason}`);
  return res.body.status === 'ready' && res.body;
});
const poolNodes = async (t: { context: Context }) => (await nodesOf(t.context.gpu)).map((n) => n.metadata.name).sort();
interface Pod { metadata: { name: string }; spec: { nodeName?: string }; status: { phase: string } }
const pods = async (t: { context: Context }) => (await t.context.gpu.api.get<{ items: Pod[] }>(`/api/v1/namespaces/${namespaceOf(t.context.user.organizationId)}/pods`)).items;
const deployment = async (t: { context: Context }, id: string) => (await t.context.api.request('GET', `/api/deployments/${id}`, { token: t.context.user.token })).body.data;
const create = async (t: { context: Context }, name: string, replicas: number) => {
  const res = await t.context.api.request('POST', '/v1/deployments', { token: t.context.user.token, body: { name, model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas } });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
};
const running = (t: { context: Context }, id: string) => eventually('running', async () => {
  const body = await deployment(t, id);
  if (body.status === 'failed') throw new Error(`failed: ${body.failureReason}`);
  return body.status === 'running' && body;
}, 120_000);
const remove = async (t: { context: Context }, id: string) => {
  const res = await t.context.api.request('DELETE', `/api/deployments/${id}`, { token: t.context.user.token });
  if (res.status !== 200) throw new Error(`delete failed: ${res.status}`);
  await eventually('its pods gone', async () => (await pods(t)).length === 0);
};
const events = async (t: { context: Context }, query = '') => t.context.api.request('GET', `/v1/admin/clusters/${t.context.clusterId}/events${query}`, { token: t.context.admin });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test.serial('a pool grown for a deployment stays while its replicas run, and is back at its minimum once it is deleted and the nodes were idle; each decision is an event and a webhook', async (t) => {
  const id = await create(t, 'grows', 3);
  await running(t, id);
  t.deepEqual(await poolNodes(t), ['l4-0', 'l4-1', 'l4-2']);

  // The three nodes each run a replica: past the idle time, none goes.
  await sleep(IDLE_MS * 1.5);
  t.deepEqual(await poolNodes(t), ['l4-0', 'l4-1', 'l4-2'], 'no node running a Kiln replica was removed');
  t.like((await pods(t)).map((p) => p.status.phase), ['Running', 'Running', 'Running']);
  t.like(await clusterReady(t), { nodePools: [{ ...L4, desiredSize: 3 }] });

  const grown = (await events(t)).body;
  t.like(grown, {
    data: [{ type: 'cluster.pool_grown', deploymentId: id, data: { id: t.context.clusterId, name: 'local', pool: 'l4', gpuType: 'nvidia-l4', previousSize: 1, size: 3, nodes: ['l4-1', 'l4-2'], deploymentId: id, reason: 'adding 2 nvidia-l4 nodes to pool l4' } }],
    pagination: { hasMore: false, nextCursor: null },
  });
  t.is(grown.data.length, 1);

  await remove(t, id);
  await eventually('the pool back at its minimum of 1 node', async () => (await poolNodes(t)).join() === 'l4-0', IDLE_MS + 90_000);
  t.like(await clusterReady(t), { nodePools: [{ ...L4, desiredSize: 1 }], gpus: [{ gpuType: 'nvidia-l4', count: 1, inUse: 0 }] });
  // Usually one shrink removes both nodes; replicas ending seconds apart may make it two, each a step and an event.
  const shrinks = ((await events(t)).body.data as { type: string; deploymentId: string | null; data: Record<string, unknown> }[]).filter((e) => e.type === 'cluster.pool_shrunk').reverse();
  t.true(shrinks.length >= 1);
  t.deepEqual(await activitiesRun(t), ['applyClusterStack', 'applyClusterStack', ...shrinks.flatMap(() => ['shrinkNodePool', 'applyClusterStack'])], 'each shrink drained, then a pulumi up removed its nodes');
  t.deepEqual(shrinks.flatMap((e) => e.data.nodes as string[]), ['l4-2', 'l4-1']);
  t.like(shrinks.at(-1), { deploymentId: null, data: { pool: 'l4', gpuType: 'nvidia-l4', size: 1, deploymentId: null } });
  t.like(shrinks[0], { data: { previousSize: 3 } });
  if (shrinks.length === 1) t.is(shrinks[0]!.data.reason, 'removing 2 idle nvidia-l4 nodes from pool l4 (l4-2, l4-1), 1 left');

  // Webhooks: the platform's subscriber hears every decision, the deployment's organization its growth.
  const admin = await eventually('the shrinks\' webhooks', async () => t.context.received.admin.length >= 1 + shrinks.length && t.context.received.admin);
  const heard = [...admin].sort((a, b) => a.event.localeCompare(b.event));
  t.like(heard, [
    { event: 'cluster.pool_grown', data: { id: t.context.clusterId, pool: 'l4', previousSize: 1, size: 3, nodes: ['l4-1', 'l4-2'], deploymentId: id } },
    { event: 'cluster.pool_shrunk', data: { id: t.context.clusterId, pool: 'l4', previousSize: 3 } },
  ]);
  t.is(heard.length, 1 + shrinks.length);
  t.like(t.context.received.user, [{ event: 'deployment.capacity_requested', data: { id, name: 'grows', gpu: 'nvidia-l4', reason: 'adding 2 nvidia-l4 nodes to pool l4' } }]);
});

test.serial('idle nodes above a node running a replica go; it and the nodes below it stay until it is idle too', async (t) => {
  const { api, admin, clusterId } = t.context;
  // Three nodes that cannot shrink (minimum 3) while the replica lands, then a minimum of 0.
  t.is((await api.request('PATCH', `/v1/admin/clusters/${clusterId}`, { token: admin, body: { nodePools: [{ ...L4, minSize: 3, desiredSize: 3 }] } })).status, 200);
  await clusterReady(t);
  const id = await create(t, 'one', 1);
  await running(t, id);
  const [pod] = await pods(t);
  const busy = pod!.spec.nodeName!;
  const kept = ['l4-0', 'l4-1', 'l4-2'].slice(0, Number(busy.split('-')[1]) + 1);
  t.is((await api.request('PATCH', `/v1/admin/clusters/${clusterId}`, { token: admin, body: { nodePools: [{ ...L4, minSize: 0, desiredSize: 3 }] } })).status, 200);

  await eventually(`the pool down to ${kept.join(', ')}`, async () => (await poolNodes(t)).join() === kept.join() && (await clusterReady(t)), IDLE_MS + 90_000);
  await sleep(IDLE_MS * 1.5);
  t.deepEqual(await poolNodes(t), kept, `${busy} runs the replica: it stays, and so do the nodes below it`);
  const [still] = await pods(t);
  t.like(still, { metadata: { name: pod!.metadata.name }, spec: { nodeName: busy }, status: { phase: 'Running' } });
  t.like(await deployment(t, id), { status: 'running', currentReplicas: 1 });

  await remove(t, id);
  await eventually('the pool at its minimum of 0 nodes', async () => (await poolNodes(t)).length === 0, IDLE_MS + 90_000);
  t.like(await clusterReady(t), { nodePools: [{ ...L4, minSize: 0, desiredSize: 0 }] });
});

test.serial('GET /v1/admin/clusters/{id}/events: pages, bad input, no credential, not an administrator, unknown cluster', async (t) => {
  const { api, admin, clusterId, user } = t.context;
  const all = (await events(t, '?limit=100')).body.data as { id: string; type: string }[];
  t.true(all.length >= 3);
  const first = await events(t, '?limit=1');
  t.is(first.status, 200);
  t.like(first.body, { data: [{ id: all[0]!.id }], pagination: { hasMore: true } });
  const second = await events(t, `?limit=1&cursor=${encodeURIComponent(first.body.pagination.nextCursor)}`);
  t.like(second.body, { data: [{ id: all[1]!.id }] });

  t.is((await events(t, '?limit=0')).status, 400);
  t.is((await events(t, '?cursor=forged')).status, 400);
  t.is((await api.request('GET', `/v1/admin/clusters/${clusterId}/events`)).status, 401);
  t.is((await api.request('GET', `/v1/admin/clusters/${clusterId}/events`, { token: user.token })).status, 403);
  t.is((await api.request('GET', '/v1/admin/clusters/clu_unknown/events', { token: admin })).status, 404);
  // Only a platform administrator subscribes to the clusters' events.
  const refused = await api.request('POST', '/api/webhooks', { token: user.token, body: { url: 'http://127.0.0.1:9/x', events: ['cluster.pool_shrunk'] } });
  t.is(refused.status, 403);
});

test.serial('shrinkNodePool, as a worker retries it: nodes whose idleness was read before a replica landed are put back; a retry after the commit finds it made, one event', async (t) => {
  const { api, admin, clusterId, env, gpu } = t.context;
  t.is((await api.request('PATCH', `/v1/admin/clusters/${clusterId}`, { token: admin, body: { nodePools: [{ ...L4, minSize: 2, desiredSize: 2 }] } })).status, 200);
  await clusterReady(t);
  const id = await create(t, 'busy', 2);
  await running(t, id);
  t.is((await api.request('PATCH', `/v1/admin/clusters/${clusterId}`, { token: admin, body: { nodePools: [{ ...L4, minSize: 0, desiredSize: 2 }] } })).status, 200);
  await clusterReady(t);
  const shrink = poolShrink({ orm: api.orm, client: env.client, apiOf: async () => gpu.api, idleAfterMs: IDLE_MS }).shrink;
  const shrunkEvents = async () => ((await events(t, '?limit=100')).body.data as { type: string }[]).filter((e) => e.type === 'cluster.pool_shrunk').length;
  const before = await shrunkEvents();

  // A stale reading: both nodes offered as idle while each runs a replica.
  const refused = await shrink({ clusterId, requestId: 'test/stale', idleNodes: ['l4-0', 'l4-1'] });
  t.like(refused, { shrunk: false });
  t.regex(refused.reason, /^node l4-[01] runs Kiln replica /);
  for (const node of await nodesOf<{ metadata: { annotations?: Record<string, string> }; spec: { unschedulable?: boolean } }>(gpu)) {
    t.falsy(node.spec.unschedulable, 'the drained nodes were put back');
    t.is(node.metadata.annotations?.[DRAINED_FOR_ANNOTATION], undefined);
  }
  t.like((await pods(t)).map((p) => p.status.phase), ['Running', 'Running']);
  t.deepEqual(await poolNodes(t), ['l4-0', 'l4-1']);
  t.is(await shrunkEvents(), before);

  await remove(t, id);
  const made = await shrink({ clusterId, requestId: 'test/idle', idleNodes: ['l4-0', 'l4-1'] });
  const retried = await shrink({ clusterId, requestId: 'test/idle', idleNodes: ['l4-0', 'l4-1'] });
  t.like(made, { shrunk: true, nodes: ['l4-1', 'l4-0'], desired: { nodePools: [{ ...L4, minSize: 0, desiredSize: 0 }] } });
  t.deepEqual(retried, made, 'the retry answers the commit it finds');
  t.is(await shrunkEvents(), before + 1, 'one event');
  // The activity's answer is what the workflow applies; here it is sent as a signal.
  if (made.shrunk) await env.client.workflow.getHandle(clusterId).signal(desiredClusterSignal, made.desired);
  await eventually('the drained nodes gone', async () => (await poolNodes(t)).length === 0 && (await clusterReady(t)), 90_000);
});

const activitiesRun = (t: { context: Context }) => activitiesOf(t.context.env, t.context.clusterId);
