// Node loss: a GPU node deleted out of band (a spot preemption) or no longer Ready (a host that stopped reporting)
// under a running deployment. The deployment's workflow notices within its watch (10 s), removes the replica the
// node took with it, places it again (growing the L4 pool when it has no free node left) and is running again
// with a deployment.recovered event naming the node; no pod is left bound to the lost node. The API, a Temporal dev server and a worker of
// this file's own (the activities workflows/deployment/queue.ts ships), on a local cluster with no nodes of its own.
import anyTest, { type TestFn } from 'ava';
import { NODE_DOWN_ANNOTATION } from '../../infra/servers/kwok-stages.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { signup } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { activitiesRun, poolNodes, startLocalClusterHarness, type LocalClusterHarness } from '../support/local-cluster.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';

installTestRuntime();

interface Context extends LocalClusterHarness { clusterId: string; user: Awaited<ReturnType<typeof signup>> }
const test = anyTest as TestFn<Context>;

const L4 = { name: 'l4', gpuType: 'nvidia-l4', minSize: 2, desiredSize: 2, maxSize: 3, gpusPerNode: 1 };

interface Pod { metadata: { name: string; deletionTimestamp?: string }; spec: { nodeName?: string }; status: { conditions?: { type: string; status: string }[] } }

test.before(async (t) => {
  const harness = await startLocalClusterHarness(import.meta.filename, { growPools: true, unschedulableGraceMs: 2000 });
  t.context = harness as Context;
  const { api, admin, kubeconfig } = harness;
  const cluster = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'local', name: 'local', kubeconfig, nodePools: [L4] } });
  t.context = { ...harness, clusterId: cluster.body.id, user: await signup(api) };
  await eventually('the cluster ready', async () => (await api.request('GET', `/v1/admin/clusters/${cluster.body.id}`, { token: admin })).body.status === 'ready');
});
test.after.always(async (t) => {
  await t.context.stop?.();
});

test.serial('a node deleted under a running deployment: its replica is placed again (the pool grows) and the deployment runs, with an event naming the node', async (t) => {
  const { api, gpu, user } = t.context;
  const created = await api.request('POST', '/v1/deployments', { token: user.token, body: { name: 'survives', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas: 2 } });
  t.is(created.status, 201);
  const id = created.body.id as string;
  const deployment = async () => (await api.request('GET', `/api/deployments/${id}`, { token: user.token })).body.data;
  const pods = async () => (await gpu.api.get<{ items: Pod[] }>(`/api/v1/namespaces/${namespaceOf(user.organizationId)}/pods`)).items;
  await eventually('running', async () => (await deployment()).status === 'running', 120_000);

  const victim = (await pods())[0]!.spec.nodeName!;
  const lostAt = Date.now();
  await gpu.api.request('DELETE', `/api/v1/nodes/${victim}`);

  const recovering = await eventually('the loss seen', async () => {
    const body = await deployment();
    return body.status !== 'running' && body;
  }, 60_000);
  t.is(recovering.status, 'scaling');
  t.is(recovering.failureReason, `1 replica lost with node ${victim} (deleted): placing it again`);
  const seenAfter = Date.now() - lostAt;

  const running = await eventually('running again', async () => {
    const body = await deployment();
    if (body.status === 'failed') throw new Error(`failed: ${body.failureReason}`);
    return body.status === 'running' && body;
  }, 120_000);
  const recoveredAfter = Date.now() - lostAt;
  t.like(running, { currentReplicas: 2, failureReason: null });
  t.log(`loss seen after ${(seenAfter / 1000).toFixed(1)} s, running again after ${(recoveredAfter / 1000).toFixed(1)} s`);

  // Both replicas Ready on nodes that exist; nothing left bound to the lost node, holding its GPU.
  const nodes = new Set((await poolNodes(gpu)).map((n) => n.metadata.name));
  const now = await pods();
  t.is(now.length, 2);
  for (const pod of now) {
    t.true(nodes.has(pod.spec.nodeName!), `${pod.metadata.name} on ${pod.spec.nodeName}, which exists`);
    t.is(pod.status.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  }
  const recoveredEvents = await api.pool.query(`SELECT payload FROM deployment_event WHERE deployment_id = $1 AND type = 'deployment.recovered'`, [id]);
  t.is(recoveredEvents.rows.length, 1);
  t.like(recoveredEvents.rows[0].payload.data, { status: 'running', replicas: 2, reason: `1 replica lost with node ${victim} (deleted), placed again` });
  const feed = await api.request('GET', `/v1/activity?orgId=${user.organizationId}&type=deployment.recovered`, { token: user.token });
  t.is(feed.body.data[0].summary, `Deployment survives recovered: 1 replica lost with node ${victim} (deleted), placed again`);
  // The rollout, then the recovery, which grew the pool (the periodic checks left out).
  t.deepEqual(await activitiesRun(t.context.env, id), ['applyStack', 'waitUntilReady', 'waitUntilReady', 'growNodePool', 'waitUntilReady']);

  t.is((await api.request('DELETE', `/api/deployments/${id}`, { token: user.token })).status, 200);
  await eventually('its pods gone', async () => (await pods()).length === 0);
});

test.serial('a node no longer Ready under a running deployment: its replica runs on a free node, with an event naming it', async (t) => {
  const { api, gpu, user } = t.context;
  const created = await api.request('POST', '/v1/deployments', { token: user.token, body: { name: 'steady', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas: 1 } });
  const id = created.body.id as string;
  const deployment = async () => (await api.request('GET', `/api/deployments/${id}`, { token: user.token })).body.data;
  const pods = async () => (await gpu.api.get<{ items: Pod[] }>(`/api/v1/namespaces/${namespaceOf(user.organizationId)}/pods`)).items;
  await eventually('running', async () => (await deployment()).status === 'running', 120_000);
  const victim = (await pods())[0]!.spec.nodeName!;

  // The host stops reporting: kwok leaves the node alone, and its Ready condition turns False.
  await gpu.api.request('PATCH', `/api/v1/nodes/${victim}`, { metadata: { annotations: { [NODE_DOWN_ANNOTATION]: 'true' } } }, 'application/merge-patch+json');
  await gpu.api.request('PATCH', `/api/v1/nodes/${victim}/status`, { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletStopped', message: 'the host stopped reporting' }] } }, 'application/strategic-merge-patch+json');
  const lostAt = Date.now();

  const running = await eventually('running again', async () => {
    const body = await deployment();
    if (body.status === 'failed') throw new Error(`failed: ${body.failureReason}`);
    const events = await api.pool.query(`SELECT payload FROM deployment_event WHERE deployment_id = $1 AND type = 'deployment.recovered'`, [id]);
    return body.status === 'running' && events.rows.length === 1 && { body, event: events.rows[0].payload };
  }, 120_000);
  t.log(`running again ${((Date.now() - lostAt) / 1000).toFixed(1)} s after the node turned NotReady`);
  t.like(running.event.data, { status: 'running', replicas: 1, reason: `1 replica lost with node ${victim} (not ready), placed again` });
  const now = await pods();
  t.is(now.length, 1);
  t.not(now[0]!.spec.nodeName, victim);
  t.is(now[0]!.status.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
});
