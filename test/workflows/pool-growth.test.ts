// Capacity follows demand: a deployment whose replicas a `local` cluster cannot place for lack of GPUs grows the
// cluster's node pool of that type, through the cluster's workflow (a `pulumi up` of the real LocalGpuPool program),
// and runs; with the pool at its maximum it fails, naming the pool, and holds no GPU. The API, a Temporal dev server
// and a worker of this file's own (the activities workflows/deployment/queue.ts ships), on a local cluster started
// with no nodes.
import anyTest, { type TestFn } from 'ava';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { signup } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { activitiesRun as activitiesOf, poolNodes as nodesOf, startLocalClusterHarness, type LocalClusterHarness } from '../support/local-cluster.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';

installTestRuntime();

interface Context extends LocalClusterHarness {
  clusterId: string;
  user: Awaited<ReturnType<typeof signup>>;
}
const test = anyTest as TestFn<Context>;

const L4 = { name: 'l4', gpuType: 'nvidia-l4', minSize: 1, desiredSize: 1, maxSize: 3, gpusPerNode: 1 };

test.before(async (t) => {
  const harness = await startLocalClusterHarness(import.meta.filename, { growPools: true, unschedulableGraceMs: 2000 });
  const { api, admin, kubeconfig } = harness;
  t.context = harness as Context; // stopped by the after hook even if the rest of this set-up fails
  const cluster = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'local', name: 'local', kubeconfig, nodePools: [L4] } });
  t.context = { ...harness, clusterId: cluster.body.id, user: await signup(api) };
  await clusterReady(t);
});
test.after.always(async (t) => {
  await t.context.stop?.();
});

const clusterReady = (t: { context: Context }) => eventually('the cluster ready', async () => {
  const res = await t.context.api.request('GET', `/v1/admin/clusters/${t.context.clusterId}`, { token: t.context.admin });
  if (res.body.status === 'failed') throw new Error(`the cluster failed: ${res.body.failureReason}`);
  return res.body.status === 'ready' && res.body;
});
const poolNodes = async (t: { context: Context }) => (await nodesOf(t.context.gpu)).map((n) => n.metadata.name).sort();
const pods = async (t: { context: Context }) => (await t.context.gpu.api.get<{ items: unknown[] }>(`/api/v1/namespaces/${namespaceOf(t.context.user.organizationId)}/pods`)).items;
const deployment = async (t: { context: Context }, id: string) => (await t.context.api.request('GET', `/api/deployments/${id}`, { token: t.context.user.token })).body.data;
const create = async (t: { context: Context }, name: string) => {
  const res = await t.context.api.request('POST', '/v1/deployments', { token: t.context.user.token, body: { name, model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas: 3 } });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
};
const activitiesRun = (t: { context: Context }, workflowId: string) => activitiesOf(t.context.env, workflowId);

test.serial('3 L4 replicas on a pool of 1 L4 node (max 3): the deployment waits while the cluster\'s workflow adds 2 nodes, then runs', async (t) => {
  const id = await create(t, 'grows');
  const waiting = await eventually('waiting for the pool', async () => {
    const body = await deployment(t, id);
    if (body.status === 'failed' || body.status === 'running') throw new Error(`${body.status} without a visible wait: ${body.failureReason}`);
    return body.failureReason === 'adding 2 nvidia-l4 nodes to pool l4' && body;
  });
  t.is(waiting.status, 'deploying');
  const running = await eventually('running', async () => {
    const body = await deployment(t, id);
    if (body.status === 'failed') throw new Error(`failed: ${body.failureReason}`);
    return body.status === 'running' && body;
  }, 120_000);
  t.like(running, { currentReplicas: 3, failureReason: null });
  const cluster = await clusterReady(t);
  t.like(cluster, { nodePools: [{ ...L4, desiredSize: 3 }], gpus: [{ gpuType: 'nvidia-l4', count: 3, inUse: 3 }] });
  t.deepEqual(await poolNodes(t), ['l4-0', 'l4-1', 'l4-2']);
  t.deepEqual(await activitiesRun(t, t.context.clusterId), ['applyClusterStack', 'applyClusterStack'], 'one pulumi up added both nodes');
  t.deepEqual(await activitiesRun(t, id), ['applyStack', 'waitUntilReady', 'growNodePool', 'waitUntilReady']);

  t.is((await t.context.api.request('DELETE', `/api/deployments/${id}`, { token: t.context.user.token })).status, 200);
  await eventually('its pods gone', async () => (await pods(t)).length === 0);
});

test.serial('with the pool at its maximum of 1 node, 3 L4 replicas fail with a reason naming the pool, and hold no GPU', async (t) => {
  const { api, admin, clusterId } = t.context;
  t.is((await api.request('PATCH', `/v1/admin/clusters/${clusterId}`, { token: admin, body: { nodePools: [{ ...L4, maxSize: 1 }] } })).status, 200);
  await clusterReady(t);
  t.deepEqual(await poolNodes(t), ['l4-0']);

  const id = await create(t, 'capped');
  const failed = await eventually('failed', async () => {
    const body = await deployment(t, id);
    if (body.status === 'running') throw new Error('running on 1 GPU with 3 replicas');
    return body.status === 'failed' && body;
  }, 120_000);
  t.regex(failed.failureReason, /^2 of 3 replicas cannot be placed: .*Insufficient nvidia\.com\/gpu.*; pool l4 is at its maximum of 1 node; the replicas it placed were removed, so it holds no GPUs$/);
  t.is(failed.currentReplicas, 0);
  await eventually('no pod left', async () => (await pods(t)).length === 0);
  t.like(await clusterReady(t), { nodePools: [{ ...L4, maxSize: 1 }], gpus: [{ gpuType: 'nvidia-l4', count: 1, inUse: 0 }] });
  t.deepEqual(await poolNodes(t), ['l4-0'], 'no node was added');
});
