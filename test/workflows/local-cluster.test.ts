// A `local` GPU cluster through the API and its workflow (test/support/local-cluster.ts): a Temporal dev server
// of this file's own, whose worker runs the activities workflows/deployment/queue.ts ships (the LocalGpuPool
// program run by the real Pulumi CLI through the real Kubernetes provider plugin), and a local cluster started
// with no nodes of its own, so every GPU node here is one the cluster's workflow declared.
import anyTest, { type TestFn } from 'ava';
import { GPU_RESOURCE, GPU_TAINT } from '../../catalog/gpu-types.ts';
import { createClusterOrchestrator } from '../../control-plane/clusters/orchestrator.ts';
import { syncLocalCluster } from '../../control-plane/clusters/service.ts';
import { createApiKey, signup } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { activitiesRun as activitiesOf, poolNodes as nodesOf, startLocalClusterHarness, type LocalClusterHarness } from '../support/local-cluster.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';

installTestRuntime();

interface Context extends LocalClusterHarness {
  /** npm start's registration of its local cluster, on this file's API and Temporal. */
  sync(nodePools: readonly (typeof L4)[]): ReturnType<typeof syncLocalCluster>;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const harness = await startLocalClusterHarness(import.meta.filename);
  const { api, env, kubeconfigs, kubeconfig } = harness;
  const sync = (nodePools: readonly (typeof L4)[]) => syncLocalCluster(api.orm.em.fork(), { secrets: kubeconfigs, orchestrator: createClusterOrchestrator(env.client) }, 'local', kubeconfig, nodePools);
  t.context = { ...harness, sync };
});
test.after.always(async (t) => {
  await t.context.stop?.();
});

const L4 = { name: 'l4', gpuType: 'nvidia-l4', minSize: 1, desiredSize: 2, maxSize: 4, gpusPerNode: 1 };

interface Node {
  metadata: { name: string; uid: string };
  spec: { taints?: { key: string }[] };
  status?: { allocatable?: Record<string, string>; conditions?: { type: string; status: string }[] };
}
const poolNodes = (t: { context: Context }, pool = 'l4') => nodesOf<Node>(t.context.gpu, pool);
const schedulable = (n: Node) => (n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false)
  && (n.spec.taints ?? []).every((taint) => taint.key === GPU_TAINT.key);
/** The cluster once its workflow has recorded `status`. */
const clusterWhen = (t: { context: Context }, id: string, status: string) => eventually(`cluster ${id} ${status}`, async () => {
  const res = await t.context.api.request('GET', `/v1/admin/clusters/${id}`, { token: t.context.admin });
  if (res.body.status === 'failed') throw new Error(`the cluster failed: ${res.body.failureReason}`);
  return res.body.status === status ? res.body : undefined;
});
/** The activities the cluster's workflow ran, in order. */
const activitiesRun = (t: { context: Context }, id: string) => activitiesOf(t.context.env, id);
const clusterId = async (t: { context: Context }) => (await t.context.api.request('GET', '/v1/admin/clusters', { token: t.context.admin })).body[0].id as string;

test.serial('a local cluster with a 2-node L4 pool: provisioning, then ready with two Ready kwok nodes of 1 GPU each', async (t) => {
  const { api, admin, kubeconfig } = t.context;
  const res = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'local', name: 'local', kubeconfig, nodePools: [L4] } });
  t.is(res.status, 201);
  t.like(res.body, { provider: 'local', status: 'provisioning', gpus: [], region: null, nodeGroups: null, nodePools: [L4] });
  t.false(JSON.stringify(res.body).includes('kubeconfig'), 'the kubeconfig is never shown');

  const ready = await clusterWhen(t, res.body.id, 'ready');
  t.deepEqual(ready.gpus, [{ gpuType: 'nvidia-l4', count: 2, inUse: 0 }]);
  const nodes = await poolNodes(t);
  t.deepEqual(nodes.map((n) => n.metadata.name).sort(), ['l4-0', 'l4-1']);
  for (const node of nodes) {
    t.true(schedulable(node), `${node.metadata.name} is Ready and schedulable when the cluster is ready`);
    t.is(node.status!.allocatable![GPU_RESOURCE], '1');
  }
  t.deepEqual(await activitiesRun(t, res.body.id), ['applyClusterStack']);
  // Deployments can be placed on it.
  const { token, organizationId } = await signup(api);
  const types = (await api.request('GET', `/v1/gpu-types?orgId=${organizationId}`, { token })).body;
  t.deepEqual(types.filter((g: { available: boolean }) => g.available).map((g: { id: string }) => g.id), ['nvidia-l4']);
});

test.serial('PATCH nodePools to 3 nodes is a pulumi up in the cluster\'s workflow: l4-2 is added, the others stay', async (t) => {
  const { api, admin } = t.context;
  const id = await clusterId(t);
  const uid = (await poolNodes(t)).find((n) => n.metadata.name === 'l4-0')!.metadata.uid;
  const res = await api.request('PATCH', `/v1/admin/clusters/${id}`, { token: admin, body: { nodePools: [{ ...L4, desiredSize: 3 }] } });
  t.is(res.status, 200);
  t.like(res.body, { status: 'scaling', nodePools: [{ ...L4, desiredSize: 3 }] });

  const ready = await clusterWhen(t, id, 'ready');
  t.deepEqual(ready.gpus, [{ gpuType: 'nvidia-l4', count: 3, inUse: 0 }]);
  const nodes = await poolNodes(t);
  t.deepEqual(nodes.map((n) => n.metadata.name).sort(), ['l4-0', 'l4-1', 'l4-2']);
  t.true(nodes.every(schedulable));
  t.is(nodes.find((n) => n.metadata.name === 'l4-0')!.metadata.uid, uid, 'l4-0 is the same Node object');
  t.deepEqual(await activitiesRun(t, id), ['applyClusterStack', 'applyClusterStack']);
});

test.serial('bad pool arguments: 400 for wrong types, 422 naming the field for broken rules, before any workflow starts; nothing changes', async (t) => {
  const { api, admin, kubeconfig } = t.context;
  const id = await clusterId(t);
  const cases: [unknown[], number, string][] = [
    [[{ ...L4, desiredSize: '2' }], 400, 'nodePools.0.desiredSize'],
    [[{ ...L4, extra: true }], 400, 'nodePools.0'],
    [[], 422, 'nodePools'],
    [[{ ...L4, minSize: 3 }], 422, 'nodePools.0'],
    [[{ ...L4, desiredSize: 1.5 }], 422, 'nodePools.0.desiredSize'],
    [[{ ...L4, gpusPerNode: 0 }], 422, 'nodePools.0.gpusPerNode'],
    [[{ ...L4, gpuType: 'nvidia-b200' }], 422, 'nodePools.0.gpuType'],
    [[{ ...L4, name: 'L4' }], 422, 'nodePools.0.name'],
    [[L4, { ...L4, gpuType: 'nvidia-h100-80gb' }], 422, 'nodePools.1.name'],
  ];
  for (const [nodePools, status, field] of cases) {
    for (const [method, path, body] of [
      ['POST', '/v1/admin/clusters', { provider: 'local', name: 'other', kubeconfig, nodePools }],
      ['PATCH', `/v1/admin/clusters/${id}`, { nodePools }],
    ] as const) {
      const res = await api.request(method, path, { token: admin, body });
      t.is(res.status, status, `${method} ${JSON.stringify(nodePools)}`);
      // The reference surface names the field in its message (its error body has no details).
      t.true(res.body.message.startsWith(`Invalid field ${field}:`), JSON.stringify(res.body));
    }
  }
  const bad = await api.request('PATCH', `/v1/admin/clusters/${id}`, { token: admin, body: { nodePools: [{ ...L4, minSize: 3 }] } });
  t.regex(bad.body.message, /must satisfy minSize <= desiredSize <= maxSize, got 3 <= 2 <= 4$/, 'the rule the stack applies');
  t.is((await api.request('PATCH', `/v1/admin/clusters/${id}`, { token: admin, body: { nodeGroups: [{ gpuType: 'nvidia-l4', minSize: 0, desiredSize: 1, maxSize: 2 }] } })).status, 422);
  const unreachable = kubeconfig.replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:9');
  const gone = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'local', name: 'gone', kubeconfig: unreachable, nodePools: [L4] } });
  t.is(gone.status, 422);
  t.regex(gone.body.message, /^Invalid field kubeconfig: could not read the cluster's nodes/);

  const clusters = (await api.request('GET', '/v1/admin/clusters', { token: admin })).body;
  t.is(clusters.length, 1, 'no cluster was created');
  t.like(clusters[0], { status: 'ready', nodePools: [{ ...L4, desiredSize: 3 }] });
  t.deepEqual(await activitiesRun(t, id), ['applyClusterStack', 'applyClusterStack'], 'no workflow was sent anything');
  t.is((await poolNodes(t)).length, 3);
});

test.serial('401 without a credential, 403 for an organization owner and for a read-only key', async (t) => {
  const { api, admin, kubeconfig } = t.context;
  const id = await clusterId(t);
  const owner = await signup(api);
  const readOnly = await createApiKey(api, admin, 'read_only');
  const routes: [string, string, unknown][] = [
    ['POST', '/v1/admin/clusters', { provider: 'local', name: 'sneaky', kubeconfig, nodePools: [L4] }],
    ['PATCH', `/v1/admin/clusters/${id}`, { nodePools: [{ ...L4, desiredSize: 4 }] }],
    ['DELETE', `/v1/admin/clusters/${id}`, undefined],
  ];
  for (const [method, path, body] of routes) {
    t.is((await api.request(method, path, { body })).status, 401, `${method} ${path}`);
    const forbidden = await api.request(method, path, { token: owner.token, body });
    t.is(forbidden.status, 403, `${method} ${path}`);
    t.is(forbidden.body.code, 'INSUFFICIENT_PERMISSIONS');
    t.is((await api.request(method, path, { token: readOnly.key, body })).status, 403, `${method} ${path} read-only`);
  }
  const clusters = (await api.request('GET', '/v1/admin/clusters', { token: admin })).body;
  t.like(clusters, [{ id, status: 'ready', nodePools: [{ desiredSize: 3 }] }]);
  t.is((await poolNodes(t)).length, 3);
});

test.serial('DELETE destroys the pools\' nodes, then the cluster is gone', async (t) => {
  const { api, admin } = t.context;
  const id = await clusterId(t);
  const res = await api.request('DELETE', `/v1/admin/clusters/${id}`, { token: admin });
  t.is(res.status, 200);
  t.like(res.body, { status: 'deleting' });
  await eventually('the cluster gone', async () => (await api.request('GET', `/v1/admin/clusters/${id}`, { token: admin })).status === 404);
  t.deepEqual(await poolNodes(t), []);
  t.deepEqual(await activitiesRun(t, id), ['applyClusterStack', 'applyClusterStack', 'destroyClusterStack']);
});

test.serial('npm start\'s registration: a kubernetes record of an earlier start becomes a local cluster whose workflow applies the pools; a later start keeps the pools an administrator changed', async (t) => {
  const { api, admin, kubeconfig, sync } = t.context;
  const earlier = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'kubernetes', name: 'local', kubeconfig } });
  t.like(earlier.body, { provider: 'kubernetes', gpus: [] });

  const { id } = await sync([{ ...L4, desiredSize: 1 }]);
  t.is(id, earlier.body.id, 'the same record');
  t.like(await clusterWhen(t, id, 'ready'), { provider: 'local', gpus: [{ gpuType: 'nvidia-l4', count: 1, inUse: 0 }], nodePools: [{ ...L4, desiredSize: 1 }] });
  t.deepEqual((await poolNodes(t)).map((n) => n.metadata.name), ['l4-0']);

  await api.request('PATCH', `/v1/admin/clusters/${id}`, { token: admin, body: { nodePools: [{ ...L4, desiredSize: 2 }] } });
  await eventually('two nodes', async () => (await poolNodes(t)).length === 2);
  await clusterWhen(t, id, 'ready');
  await sync([{ ...L4, desiredSize: 1 }]);
  t.like(await clusterWhen(t, id, 'ready'), { gpus: [{ gpuType: 'nvidia-l4', count: 2, inUse: 0 }], nodePools: [{ ...L4, desiredSize: 2 }] });
  t.deepEqual(await activitiesRun(t, id), ['applyClusterStack', 'applyClusterStack'], 'the running workflow had applied it: nothing more ran');
  t.is((await poolNodes(t)).length, 2);
});
