// /v1/admin/clusters: GPU clusters as records, managed by platform administrators, and where a new
// deployment lands (on the reference surface, whose errors name the field in the message). A real local GPU cluster (kube-apiserver, scheduler, kwok nodes) is registered by its
// kubeconfig. No cluster is registered here until a test does it.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { CLUSTER_WORKFLOW } from '../../workflows/contract/cluster.ts';
import { createApiKey, signup, startTestApi, type TestApi, validDeployment } from '../support/control-plane.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';

let api: TestApi;
let gpuCluster: GpuCluster;
let kubeconfig: string;
let admin: string;

test.before(async () => {
  [api, gpuCluster] = await Promise.all([startTestApi(import.meta.filename, { defaultCluster: false }), startTestGpuCluster()]);
  kubeconfig = await readFile(gpuCluster.kubeconfig, 'utf8');
  const res = await api.request('POST', '/v1/auth/signup', {
    body: { email: 'admin@kiln.test', password: 'correct horse battery', name: 'Platform Admin', organizationName: 'Kiln operators' },
  });
  admin = res.body.access_token;
});
test.after.always(async () => {
  await api?.close();
  await gpuCluster?.stop();
});

const awsCluster = (name: string) => ({
  provider: 'aws', name, region: 'us-east-1', subnetIds: ['subnet-0123abcd', 'subnet-4567ef01'],
  nodeGroups: [{ gpuType: 'nvidia-a100-80gb', minSize: 0, desiredSize: 1, maxSize: 2 }],
});
const clusterCount = async () => Number((await api.pool.query(`SELECT count(*) FROM gpu_cluster WHERE deleted_at IS NULL`)).rows[0].count);

test.serial('with no cluster registered, a deployment is 503 GPU_UNAVAILABLE and nothing is created', async (t) => {
  const { token, organizationId } = await signup(api);
  const res = await api.request('POST', '/api/deployments', { token, body: validDeployment('nowhere') });
  t.is(res.status, 503);
  t.like(res.body, { success: false, data: null, error: { code: 'GPU_UNAVAILABLE', details: { gpu: 'nvidia-l4' } } });
  t.false((await api.request('GET', `/v1/gpu-types?orgId=${organizationId}`, { token })).body.some((g: { available: boolean }) => g.available));
  t.regex(res.body.error.message, /No GPU cluster offers nvidia-l4/);
  t.deepEqual((await api.request('GET', '/api/deployments', { token })).body.data, []);
  const v1 = await api.request('POST', '/v1/deployments', { token, body: validDeployment('nowhere') });
  t.like(v1.body, { code: 'GPU_UNAVAILABLE', statusCode: 503 });
});

test.serial('an existing cluster registered by kubeconfig offers the GPUs its nodes have; deployments land on it', async (t) => {
  const res = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'kubernetes', name: 'local', kubeconfig } });
  t.is(res.status, 201);
  t.like(res.body, { name: 'local', provider: 'kubernetes', status: 'ready', region: null, nodeGroups: null, failureReason: null });
  t.deepEqual(res.body.gpus, [{ gpuType: 'nvidia-h100-80gb', count: 8, inUse: 0 }, { gpuType: 'nvidia-l4', count: 2, inUse: 0 }]);
  t.false(JSON.stringify(res.body).includes('kubeconfig'), 'the kubeconfig is never shown');
  const { rows } = await api.pool.query(`SELECT sealed_kubeconfig FROM gpu_cluster WHERE id = $1`, [res.body.id]);
  t.regex(rows[0].sealed_kubeconfig, /^v1\./);
  t.false(rows[0].sealed_kubeconfig.includes(gpuCluster.credentials.token!), 'sealed at rest');

  t.deepEqual((await api.request('GET', '/v1/admin/clusters', { token: admin })).body.map((c: { id: string }) => c.id), [res.body.id]);
  t.like((await api.request('GET', `/v1/admin/clusters/${res.body.id}`, { token: admin })).body, { id: res.body.id, status: 'ready' });

  const { token, organizationId } = await signup(api);
  const available = (await api.request('GET', `/v1/gpu-types?orgId=${organizationId}`, { token })).body.filter((g: { available: boolean }) => g.available).map((g: { id: string }) => g.id);
  t.deepEqual(available, ['nvidia-h100-80gb', 'nvidia-l4']);
  const created = await api.request('POST', '/api/deployments', { token, body: validDeployment('on-local') });
  t.is(created.status, 201);
  const placed = await api.pool.query(`SELECT cluster_id FROM deployment WHERE id = $1`, [created.body.data.id]);
  t.is(placed.rows[0].cluster_id, res.body.id);
  // GPUs in use: a pending deployment holds none yet; a running one its replicas x GPUs per replica.
  const gpusOf = async () => (await api.request('GET', '/v1/admin/clusters', { token: admin })).body.find((c: { id: string }) => c.id === res.body.id).gpus;
  t.deepEqual(await gpusOf(), [{ gpuType: 'nvidia-h100-80gb', count: 8, inUse: 0 }, { gpuType: 'nvidia-l4', count: 2, inUse: 0 }]);
  await api.pool.query(`UPDATE deployment SET status = 'running' WHERE id = $1`, [created.body.data.id]);
  t.deepEqual(await gpusOf(), [{ gpuType: 'nvidia-h100-80gb', count: 8, inUse: 0 }, { gpuType: 'nvidia-l4', count: 2, inUse: 1 }]);
  const a100 = await api.request('POST', '/api/deployments', { token, body: { ...validDeployment('a100'), gpu: 'nvidia-a100-80gb' } });
  t.is(a100.status, 503, 'the local cluster has no A100 nodes');
  t.is(a100.body.error.code, 'GPU_UNAVAILABLE');
  // A deployment stays on its cluster: it may move to the H100s there, not to A100s it lacks.
  const moved = await api.request('PATCH', `/api/deployments/${created.body.data.id}`, { token, body: { gpu: 'nvidia-a100-80gb' } });
  t.is(moved.status, 503);
  t.is(moved.body.error.message, 'GPU cluster local, which serves this deployment, does not offer nvidia-a100-80gb');
  t.like((await api.request('GET', `/api/deployments/${created.body.data.id}`, { token })).body.data, { gpu: 'nvidia-l4' });
  t.like((await api.request('PATCH', `/api/deployments/${created.body.data.id}`, { token, body: { gpu: 'nvidia-h100-80gb' } })).body.data, { gpu: 'nvidia-h100-80gb' });
  t.deepEqual(await gpusOf(), [{ gpuType: 'nvidia-h100-80gb', count: 8, inUse: 1 }, { gpuType: 'nvidia-l4', count: 2, inUse: 0 }], 'the GPUs held moved with it');
  t.deepEqual((await api.request('GET', `/v1/admin/clusters/${res.body.id}`, { token: admin })).body.gpus, await gpusOf());
});

test.serial('a cluster serving deployments cannot be deleted; an idle one is forgotten', async (t) => {
  const { body: cluster } = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'kubernetes', name: 'doomed', kubeconfig } });
  const { token } = await signup(api);
  await api.pool.query(`UPDATE gpu_cluster SET gpus = '[{"gpuType":"nvidia-t4","count":4}]' WHERE id = $1`, [cluster.id]);
  const deployment = await api.request('POST', '/api/deployments', { token, body: { ...validDeployment('t4'), gpu: 'nvidia-t4' } });
  t.is(deployment.status, 201);
  const refused = await api.request('DELETE', `/v1/admin/clusters/${cluster.id}`, { token: admin });
  t.is(refused.status, 409);
  t.like((await api.request('GET', `/v1/admin/clusters/${cluster.id}`, { token: admin })).body, { status: 'ready' });
  // Its nodes gone from under a running deployment: the GPUs it holds are still shown, of none offered (one
  // replica of two T4s: a 16 GB T4 cannot hold the 8B model's weights alone).
  await api.pool.query(`UPDATE deployment SET status = 'running' WHERE id = $1`, [deployment.body.data.id]);
  await api.pool.query(`UPDATE gpu_cluster SET gpus = '[]' WHERE id = $1`, [cluster.id]);
  t.like((await api.pool.query(`SELECT replicas, gpus_per_replica FROM deployment WHERE id = $1`, [deployment.body.data.id])).rows[0], { replicas: 1, gpus_per_replica: 2 });
  t.deepEqual((await api.request('GET', `/v1/admin/clusters/${cluster.id}`, { token: admin })).body.gpus, [{ gpuType: 'nvidia-t4', count: 0, inUse: 2 }]);

  await api.pool.query(`UPDATE deployment SET deleted_at = now(), status = 'deleted' WHERE id = $1`, [deployment.body.data.id]);
  const deleted = await api.request('DELETE', `/v1/admin/clusters/${cluster.id}`, { token: admin });
  t.is(deleted.status, 200);
  t.is(deleted.body.status, 'deleted');
  t.is((await api.request('GET', `/v1/admin/clusters/${cluster.id}`, { token: admin })).status, 404);
  const again = await api.request('POST', '/api/deployments', { token, body: { ...validDeployment('t4-again'), gpu: 'nvidia-t4' } });
  t.is(again.status, 503, 'no cluster offers T4 any more');
});

test.serial('an aws cluster is recorded as provisioning and its workflow is sent the desired stack', async (t) => {
  const res = await api.request('POST', '/v1/admin/clusters', { token: admin, body: awsCluster('eks-east') });
  t.is(res.status, 201);
  t.like(res.body, { provider: 'aws', status: 'provisioning', region: 'us-east-1', gpus: [] });
  const description = await api.workflows.workflow.getHandle(res.body.id).describe();
  t.is(description.type, CLUSTER_WORKFLOW);
  t.is(description.taskQueue, 'kiln-deployments');

  const scaled = await api.request('PATCH', `/v1/admin/clusters/${res.body.id}`, {
    token: admin, body: { nodeGroups: [{ gpuType: 'nvidia-a100-80gb', minSize: 1, desiredSize: 2, maxSize: 4 }] },
  });
  t.is(scaled.status, 200);
  t.deepEqual(scaled.body.nodeGroups, [{ gpuType: 'nvidia-a100-80gb', minSize: 1, desiredSize: 2, maxSize: 4 }]);
  const history = await api.workflows.workflow.getHandle(res.body.id).fetchHistory();
  const converter = api.workflows.options.loadedDataConverter.payloadConverter;
  const sent = (history.events ?? [])
    .filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'desiredCluster')
    .map((e) => converter.fromPayload(e.workflowExecutionSignaledEventAttributes!.input!.payloads![0]!) as { generation: number; nodeGroups: { desiredSize: number }[] });
  t.deepEqual(sent.map((d) => [d.generation, d.nodeGroups[0]!.desiredSize]), [[1, 1], [2, 2]]);

  // A provisioning cluster takes no deployments.
  const { token } = await signup(api);
  t.is((await api.request('POST', '/api/deployments', { token, body: { ...validDeployment('a100'), gpu: 'nvidia-a100-80gb' } })).status, 503);

  const deleting = await api.request('DELETE', `/v1/admin/clusters/${res.body.id}`, { token: admin });
  t.like(deleting.body, { status: 'deleting' });
});

test.serial('PATCH renames and reads the GPUs again; fields of the other provider are 422', async (t) => {
  const { body: cluster } = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'kubernetes', name: 'grows', kubeconfig } });
  await gpuCluster.addNodes({ gpuType: 'nvidia-t4', nodes: 1, gpusPerNode: 4 });
  const res = await api.request('PATCH', `/v1/admin/clusters/${cluster.id}`, { token: admin, body: { name: 'grown' } });
  t.is(res.status, 200);
  t.like(res.body, { name: 'grown' });
  t.deepEqual(res.body.gpus.find((g: { gpuType: string }) => g.gpuType === 'nvidia-t4'), { gpuType: 'nvidia-t4', count: 4, inUse: 0 });

  const groups = await api.request('PATCH', `/v1/admin/clusters/${cluster.id}`, { token: admin, body: { nodeGroups: awsCluster('x').nodeGroups } });
  t.is(groups.status, 422);
  t.like(groups.body, { code: 'VALIDATION_ERROR', message: 'Invalid field nodeGroups: only an aws cluster has node groups Kiln can scale' });
  const { body: eks } = await api.request('POST', '/v1/admin/clusters', { token: admin, body: awsCluster('eks-west') });
  const kube = await api.request('PATCH', `/v1/admin/clusters/${eks.id}`, { token: admin, body: { kubeconfig } });
  t.is(kube.status, 422);
  t.regex(kube.body.message, /^Invalid field kubeconfig: only a kubernetes cluster takes a kubeconfig/);
  const taken = await api.request('PATCH', `/v1/admin/clusters/${cluster.id}`, { token: admin, body: { name: 'eks-west' } });
  t.is(taken.status, 409);
  t.is((await api.request('PATCH', '/v1/admin/clusters/clu_unknown', { token: admin, body: { name: 'x' } })).status, 404);
  t.like((await api.request('GET', `/v1/admin/clusters/${cluster.id}`, { token: admin })).body, { name: 'grown' });

  // A kubernetes cluster recorded without a kubeconfig (as tests record one): an empty PATCH keeps its GPUs, never a 500.
  await api.pool.query(`INSERT INTO gpu_cluster (id, name, provider, status, gpus, generation, delete_requested, created_at, updated_at) VALUES ('clu_nokubeconfig0000', 'recorded', 'kubernetes', 'ready', '[{"gpuType":"nvidia-l4","count":2}]', 1, false, now(), now())`);
  const empty = await api.request('PATCH', '/v1/admin/clusters/clu_nokubeconfig0000', { token: admin, body: {} });
  t.is(empty.status, 200, JSON.stringify(empty.body));
  t.like(empty.body, { name: 'recorded', gpus: [{ gpuType: 'nvidia-l4', count: 2 }] });
  await api.pool.query(`DELETE FROM gpu_cluster WHERE id = 'clu_nokubeconfig0000'`);
});

test.serial('bad input: 400 for wrong types and missing fields, 422 naming the field for broken rules; nothing is created', async (t) => {
  const before = await clusterCount();
  const cases: [unknown, number, string][] = [
    [{ provider: 'kubernetes', name: 'x' }, 400, 'kubeconfig'],
    [{ provider: 'kubernetes', name: 'x', kubeconfig: 42 }, 400, 'kubeconfig'],
    [{ provider: 'kubernetes', name: 'Not_A_Label', kubeconfig }, 422, 'name'],
    [{ provider: 'kubernetes', name: 'x', kubeconfig: 'just: [text' }, 422, 'kubeconfig'],
    [{ provider: 'kubernetes', name: 'x', kubeconfig: 'apiVersion: v1\nkind: Config\n' }, 422, 'kubeconfig'],
    [{ ...awsCluster('x'), region: 'mars' }, 422, 'region'],
    [{ ...awsCluster('x'), subnetIds: ['subnet-0123abcd'] }, 422, 'subnetIds'],
    [{ ...awsCluster('x'), nodeGroups: [{ gpuType: 'nvidia-l4', minSize: 3, desiredSize: 1, maxSize: 4 }] }, 422, 'nodeGroups.0'],
    [{ ...awsCluster('x'), nodeGroups: [{ gpuType: 'nvidia-b200', minSize: 0, desiredSize: 1, maxSize: 4 }] }, 422, 'nodeGroups.0.gpuType'],
  ];
  for (const [body, status, field] of cases) {
    const res = await api.request('POST', '/v1/admin/clusters', { token: admin, body });
    t.is(res.status, status, JSON.stringify(body));
    // The reference surface names the field in its message (its error body has no details).
    t.true(res.body.message.startsWith(`Invalid field ${field}:`), JSON.stringify(res.body));
  }
  // A kubeconfig that parses but reaches no API server.
  const unreachable = kubeconfig.replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:9');
  const res = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'kubernetes', name: 'gone', kubeconfig: unreachable } });
  t.is(res.status, 422);
  t.regex(res.body.message, /^Invalid field kubeconfig: could not read the cluster's nodes/);
  const duplicate = await api.request('POST', '/v1/admin/clusters', { token: admin, body: { provider: 'kubernetes', name: 'local', kubeconfig } });
  t.is(duplicate.status, 409);
  t.is(await clusterCount(), before);
});

test.serial('admin routes: 401 without a credential, 403 for an organization owner who is no platform administrator, scopes apply', async (t) => {
  const { body: cluster } = await api.request('GET', '/v1/admin/clusters', { token: admin });
  const id = cluster[0].id;
  const routes: [string, string, unknown?][] = [
    ['GET', '/v1/admin/clusters'], ['POST', '/v1/admin/clusters', { provider: 'kubernetes', name: 'sneaky', kubeconfig }],
    ['GET', `/v1/admin/clusters/${id}`], ['PATCH', `/v1/admin/clusters/${id}`, { name: 'renamed' }], ['DELETE', `/v1/admin/clusters/${id}`],
  ];
  const owner = await signup(api);
  for (const [method, path, body] of routes) {
    t.is((await api.request(method, path, { body })).status, 401, `${method} ${path}`);
    const forbidden = await api.request(method, path, { token: owner.token, body });
    t.is(forbidden.status, 403, `${method} ${path}`);
    t.is(forbidden.body.code, 'INSUFFICIENT_PERMISSIONS');
  }
  const readOnly = await createApiKey(api, admin, 'read_only');
  t.is((await api.request('GET', '/v1/admin/clusters', { token: readOnly.key })).status, 200);
  t.is((await api.request('PATCH', `/v1/admin/clusters/${id}`, { token: readOnly.key, body: { name: 'renamed' } })).status, 403);
  const deploymentsOnly = await createApiKey(api, admin, 'deployments_only');
  t.is((await api.request('GET', '/v1/admin/clusters', { token: deploymentsOnly.key })).status, 403);
  t.like((await api.request('GET', `/v1/admin/clusters/${id}`, { token: admin })).body, { id, status: 'ready' });
  t.is(await clusterCount(), cluster.length);
});
