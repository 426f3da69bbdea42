// A worker killed while a node pool grows: Kiln as processes (test/support/kiln.ts) on a local cluster with no
// nodes of its own, whose `local` provider cluster an administrator creates with a 1-node L4 pool (max 4). A
// deployment of 3 L4 replicas makes the pool grow; the worker is SIGKILLed the moment the growth is committed
// (the cluster `scaling`), then started again. The pool converges once: 3 nodes, no duplicate, no second growth.
import { readFile } from 'node:fs/promises';
import anyTest, { type TestFn } from 'ava';
import { NODE_POOL_LABEL } from '../../stacks/local-gpu-pool/index.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { eventually } from '../support/eventually.ts';
import { deploymentWhen, newTenant, startKiln, type Kiln } from '../support/kiln.ts';

const ADMIN_EMAIL = 'ops@pool-growth.example';
const L4 = { name: 'l4', gpuType: 'nvidia-l4', minSize: 1, desiredSize: 1, maxSize: 4, gpusPerNode: 1 };

interface Context { kiln: Kiln; admin: string; clusterId: string }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const kiln = await startKiln(import.meta.filename, { nodePools: [], env: { KILN_ADMIN_EMAILS: ADMIN_EMAIL } });
  t.context = { kiln } as Context; // stopped by the after hook even if the rest of this set-up fails
  const signup = await kiln.request('POST', '/v1/auth/signup', { body: { email: ADMIN_EMAIL, password: 'correct horse battery', name: 'Operations', organizationName: 'Operations' } });
  const admin = signup.body.access_token as string;
  await kiln.setPlan(signup.body.user.organization_id, 'growth'); // its polling stays within the rate limits
  const created = await kiln.request('POST', '/v1/admin/clusters', {
    token: admin, body: { provider: 'local', name: 'pooled', kubeconfig: await readFile(kiln.cluster.kubeconfig, 'utf8'), nodePools: [L4] },
  });
  if (created.status !== 201) throw new Error(`cluster: ${created.status} ${JSON.stringify(created.body)}`);
  t.context = { kiln, admin, clusterId: created.body.id };
  await clusterWhen(t, (c) => c.status === 'ready', 'the cluster ready');
});
test.after.always(async (t) => t.context.kiln?.stop());

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const clusterWhen = (t: { context: Context }, until: (cluster: any) => boolean, what: string, timeoutMs = 120_000) => eventually(what, async () => {
  const res = await t.context.kiln.request('GET', `/v1/admin/clusters/${t.context.clusterId}`, { token: t.context.admin });
  if (res.status !== 200 || res.body.status === 'failed') throw new Error(`the cluster: ${res.status} ${JSON.stringify(res.body)}`);
  return until(res.body) && res.body;
}, timeoutMs);

test('a worker killed as the pool grows: the pool converges once, with no duplicate node, and the deployment runs', async (t) => {
  const { kiln } = t.context;
  const tenant = await newTenant(kiln, 'grower');
  const res = await kiln.request('POST', '/v1/deployments', {
    token: tenant.key, body: { name: 'wide', model: 'Qwen/Qwen2.5-1.5B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas: 3 },
  });
  t.is(res.status, 201);

  await clusterWhen(t, (c) => c.status === 'scaling', 'the growth committed', 120_000);
  await kiln.killWorker();
  const killedAt = Date.now();
  await kiln.startWorker();

  const running = await deploymentWhen(kiln, tenant.key, res.body.id, (d) => d.status === 'running' || d.status === 'failed', 'running', 240_000);
  t.like(running, { status: 'running', currentReplicas: 3 });
  t.log(`running ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
  const cluster = await clusterWhen(t, (c) => c.status === 'ready', 'the cluster ready again');
  t.deepEqual(cluster.nodePools, [{ ...L4, desiredSize: 3 }], 'grown once, by the 2 nodes missing');
  const nodes = await kiln.cluster.api.get<{ items: { metadata: { name: string } }[] }>(`/api/v1/nodes?labelSelector=${encodeURIComponent(`${NODE_POOL_LABEL}=l4`)}`);
  t.deepEqual(nodes.items.map((n) => n.metadata.name).sort(), ['l4-0', 'l4-1', 'l4-2']);
  const pods = await kiln.cluster.api.get<{ items: { spec: { nodeName?: string } }[] }>(`/api/v1/namespaces/${namespaceOf(tenant.organizationId)}/pods`);
  t.deepEqual(pods.items.map((p) => p.spec.nodeName).sort(), ['l4-0', 'l4-1', 'l4-2'], 'one replica a node');
});
