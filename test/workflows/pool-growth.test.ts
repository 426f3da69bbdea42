// Capacity follows demand: a deployment whose replicas a `local` cluster cannot place for lack of GPUs grows the
// cluster's node pool of that type, through the cluster's workflow (a `pulumi up` of the real LocalGpuPool program),
// and runs; with the pool at its maximum it fails, naming the pool, and holds no GPU. The dry run says so first, by
// the same rule (fits now, fits once a pool grows by so many nodes at so much an hour, or cannot fit and why). The
// API, a Temporal dev server and a worker of this file's own (the activities workflows/deployment/queue.ts ships),
// on a local cluster started with no nodes.
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
const create = async (t: { context: Context }, name: string, replicas = 3) => {
  const res = await t.context.api.request('POST', '/v1/deployments', { token: t.context.user.token, body: { name, model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas } });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
};
const activitiesRun = (t: { context: Context }, workflowId: string) => activitiesOf(t.context.env, workflowId);
const dryRun = async (t: { context: Context }, body: Record<string, unknown>, preview = false) => {
  const res = await t.context.api.request('POST', `/v1/deployments/validate?preview=${preview}`, {
    token: t.context.user.token, body: { name: 'checked', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', ...body },
  });
  if (res.status !== 200) throw new Error(`dry run failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};
const capacityCheck = (body: { checks: { check: string; passed: boolean; reason: string }[] }) => body.checks.find((c) => c.check === 'capacity')!;

test.serial('the dry run on a pool of 1 L4 node (max 3): 1 replica fits now, 3 fit once pool l4 grows by 2 nodes (160 cents an hour), 4 or a replica of 2 GPUs cannot fit', async (t) => {
  const now = await dryRun(t, { replicas: 1 });
  t.like(now, { valid: true, fit: { verdict: 'fits_now', replicas: 1, replicasFit: 1, growth: null, reason: '1 of 1 replicas fit now on GPU cluster local: 1 GPU(s) free on its nodes, 1 per replica' } });
  t.like(now.capacity, [{ name: 'local', gpusFree: 1, replicasFit: 1, measuredFrom: 'nodes' }]);

  // Creation would succeed (the preview on the worker plans the objects), and wait for 2 more L4 nodes of pool l4.
  const grown = await dryRun(t, { replicas: 3 }, true);
  const reason = '1 of 3 replicas fit now on GPU cluster local: 1 GPU(s) free on its nodes, 1 per replica; the other 2 fit once the rollout grows the cluster: adding 2 nvidia-l4 nodes to pool l4 (1 -> 3), 160 cents an hour more';
  t.deepEqual(grown.fit, {
    verdict: 'fits_after_growth', replicas: 3, replicasFit: 1, reason,
    growth: { nodes: 2, hourlyCents: 160, pools: [{ pool: 'l4', gpuType: 'nvidia-l4', gpusPerNode: 1, fromNodes: 1, toNodes: 3, nodes: 2, hourlyCents: 160 }] },
  });
  t.like(capacityCheck(grown), { passed: true, reason });
  t.like(grown, { valid: true, plan: { failure: null }, cost: { hourlyCents: 240 } });
  t.true(grown.plan.resources.length > 0);

  // 4 replicas: the pool grows to its maximum of 3 and the fourth still has no GPU.
  const four = await dryRun(t, { replicas: 4 });
  t.like(four, { valid: false, fit: { verdict: 'cannot_fit', replicasFit: 1, growth: { nodes: 2, hourlyCents: 160 } } });
  t.is(capacityCheck(four).reason, 'Only 1 of 4 replicas fit now on GPU cluster local: 1 GPU(s) free on its nodes, 1 per replica; growing the cluster (adding 2 nvidia-l4 nodes to pool l4 (1 -> 3)) places 2 more, and 1 still does not fit: pool l4 is at its maximum of 3 nodes; lower replicas, or free or add GPUs');
  t.false(capacityCheck(four).passed);

  // A replica of 2 GPUs: no pool has L4 nodes that big.
  const big = await dryRun(t, { replicas: 1, gpusPerReplica: 2 });
  t.like(big.fit, { verdict: 'cannot_fit', replicasFit: 0, growth: null });
  t.is(capacityCheck(big).reason, 'Only 0 of 1 replicas fit now on GPU cluster local: 1 GPU(s) free on its nodes, 2 per replica; no node pool grows for the other 1: no node pool of the cluster has nvidia-l4 nodes of 2 GPUs or more; lower replicas, or free or add GPUs');

  // A GPU type no pool offers: no cluster is placed, and that is why it cannot fit.
  const t4 = await dryRun(t, { gpu: 'nvidia-t4' });
  t.like(t4.fit, { verdict: 'cannot_fit', replicasFit: 0, growth: null, reason: 'No GPU cluster offers nvidia-t4 at the moment' });
  t.deepEqual(t4.checks.filter((c: { passed: boolean }) => !c.passed).map((c: { check: string }) => c.check), ['placement']);

  t.deepEqual(await poolNodes(t), ['l4-0'], 'the dry run added no node');
  t.deepEqual(await activitiesRun(t, t.context.clusterId), ['applyClusterStack'], 'nor asked the cluster\'s workflow for any');
});

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

test.serial('the dry run with the pool at its maximum of 1 node: 3 L4 replicas cannot fit, naming the pool', async (t) => {
  const res = await dryRun(t, { replicas: 3 });
  const reason = 'Only 1 of 3 replicas fit now on GPU cluster local: 1 GPU(s) free on its nodes, 1 per replica; no node pool grows for the other 2: pool l4 is at its maximum of 1 node; lower replicas, or free or add GPUs';
  t.deepEqual(res.fit, { verdict: 'cannot_fit', replicas: 3, replicasFit: 1, growth: null, reason });
  t.like(capacityCheck(res), { passed: false, reason });
  t.false(res.valid);
  // What fits now still does.
  t.like(await dryRun(t, { replicas: 1 }), { valid: true, fit: { verdict: 'fits_now' } });
});

test.serial('10 L4 replicas on a pool of 8 L4 nodes: with room to 12 the pool grows to 10 and the deployment runs; at a maximum of 8 it fails naming the pool, holding no GPU', async (t) => {
  const { api, admin, clusterId, user } = t.context;
  const resize = async (pool: typeof L4) => {
    t.is((await api.request('PATCH', `/v1/admin/clusters/${clusterId}`, { token: admin, body: { nodePools: [pool] } })).status, 200);
    await clusterReady(t);
  };
  await resize({ ...L4, desiredSize: 8, maxSize: 12 });
  t.is((await poolNodes(t)).length, 8);

  const grows = await create(t, 'ten', 10);
  const running = await eventually('running', async () => {
    const body = await deployment(t, grows);
    if (body.status === 'failed') throw new Error(`failed: ${body.failureReason}`);
    return body.status === 'running' && body;
  }, 180_000);
  t.like(running, { currentReplicas: 10, failureReason: null });
  t.like(await clusterReady(t), { nodePools: [{ ...L4, desiredSize: 10, maxSize: 12 }], gpus: [{ gpuType: 'nvidia-l4', count: 10, inUse: 10 }] });
  t.deepEqual(await poolNodes(t), Array.from({ length: 10 }, (_, i) => `l4-${i}`).sort());
  t.is((await api.request('DELETE', `/api/deployments/${grows}`, { token: user.token })).status, 200);
  await eventually('its pods gone', async () => (await pods(t)).length === 0);

  await resize({ ...L4, desiredSize: 8, maxSize: 8 });
  const capped = await create(t, 'ten-capped', 10);
  const failed = await eventually('failed', async () => {
    const body = await deployment(t, capped);
    if (body.status === 'running') throw new Error('running 10 replicas on 8 GPUs');
    return body.status === 'failed' && body;
  }, 180_000);
  t.regex(failed.failureReason, /^2 of 10 replicas cannot be placed: .*; pool l4 is at its maximum of 8 nodes; the replicas it placed were removed, so it holds no GPUs$/);
  await eventually('no pod left', async () => (await pods(t)).length === 0);
  t.like(await clusterReady(t), { nodePools: [{ ...L4, desiredSize: 8, maxSize: 8 }], gpus: [{ gpuType: 'nvidia-l4', count: 8, inUse: 0 }] });
});
