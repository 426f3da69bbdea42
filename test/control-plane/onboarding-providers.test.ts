// /v1/onboarding/providers: where an organization can run deployments (the shared clusters and its own),
// and connecting its own Kubernetes cluster by kubeconfig (a real local GPU cluster here): seen and used by
// that organization alone, tried before the shared clusters, with provisioning circuits of its own.
import { readFile } from 'node:fs/promises';
import test from 'ava';
import { parse, stringify } from 'yaml';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { signupAdmin } from '../support/admin.ts';
import { addMember, createApiKey, signup, startTestApi, type TestApi, validDeployment } from '../support/control-plane.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';

let api: TestApi;
let gpuCluster: GpuCluster;
let kubeconfig: string;

test.before(async () => {
  // The shared cluster startTestApi registers (test-cluster: 64 GPUs of every type), and a real cluster to bring.
  [api, gpuCluster] = await Promise.all([startTestApi(import.meta.filename), startTestGpuCluster()]);
  kubeconfig = await readFile(gpuCluster.kubeconfig, 'utf8');
});
test.after.always(async () => {
  await api?.close();
  await gpuCluster?.stop();
});

type User = Awaited<ReturnType<typeof signup>>;
const PROVIDERS = '/v1/onboarding/providers';
const providers = async (user: User) => (await api.request('GET', `${PROVIDERS}?orgId=${user.organizationId}`, { token: user.token })).body as Array<Record<string, unknown> & { id: string; kind: string; gpus: Array<{ gpuType: string; count: number; circuit: string }> }>;
const connect = (user: User, name: string, config = kubeconfig) => api.request('POST', PROVIDERS, { token: user.token, body: { type: 'kubernetes', name, kubeconfig: config } });
const clusterOf = async (deploymentId: string) => (await api.pool.query(`SELECT cluster_id FROM deployment WHERE id = $1`, [deploymentId])).rows[0].cluster_id as string;
const ownClusterCount = async () => Number((await api.pool.query(`SELECT count(*) FROM gpu_cluster WHERE organization_id IS NOT NULL`)).rows[0].count);

test('a new organization runs on the shared clusters: listed with their GPUs and circuits; choosing them is not yet done', async (t) => {
  const user = await signup(api, 'newcomer');
  const list = await providers(user);
  t.is(list.length, 1);
  t.like(list[0], { name: 'test-cluster', kind: 'shared', provider: 'kubernetes', status: 'ready', usable: true, failureReason: null });
  t.true(list[0]!.gpus.some((g) => g.gpuType === 'nvidia-l4' && g.count === 64 && g.circuit === 'closed'));
  const steps = (await api.request('GET', `/v1/onboarding/steps?orgId=${user.organizationId}`, { token: user.token })).body;
  t.false(steps.find((s: { id: string }) => s.id === 'choose_provider').done);
});

test.serial('an organization connects its own cluster: the GPUs its nodes offer, first in the list, its next deployment lands there; other organizations never see or use it', async (t) => {
  const owner = await signup(api, 'byoc');
  const res = await connect(owner, 'home');
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like(res.body, { name: 'home', kind: 'own', provider: 'kubernetes', status: 'ready', usable: true, failureReason: null });
  t.deepEqual(res.body.gpus, [{ gpuType: 'nvidia-h100-80gb', count: 8, circuit: 'closed' }, { gpuType: 'nvidia-l4', count: 2, circuit: 'closed' }]);
  t.false(JSON.stringify(res.body).includes('kubeconfig') || JSON.stringify(res.body).includes(gpuCluster.credentials.token!), 'the kubeconfig is never shown');
  const { rows: [stored] } = await api.pool.query(`SELECT organization_id, sealed_kubeconfig FROM gpu_cluster WHERE id = $1`, [res.body.id]);
  t.is(stored.organization_id, owner.organizationId);
  t.false(stored.sealed_kubeconfig.includes(gpuCluster.credentials.token!), 'sealed at rest');

  t.deepEqual((await providers(owner)).map((p) => [p.name, p.kind]), [['home', 'own'], ['test-cluster', 'shared']]);
  const step = (await api.request('GET', `/v1/onboarding/steps?orgId=${owner.organizationId}`, { token: owner.token })).body.find((s: { id: string }) => s.id === 'choose_provider');
  t.true(step.done, 'connecting a cluster is choosing where to run');

  // The shared cluster offers more L4s, yet the organization's own cluster is tried first.
  const mine = await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('on-home') });
  t.is(mine.status, 201);
  t.is(await clusterOf(mine.body.id), res.body.id);

  // Another organization: not in its list, not in its placement, the same name is free for it.
  const other = await signup(api, 'neighbour');
  t.deepEqual((await providers(other)).map((p) => p.name), ['test-cluster']);
  const theirs = await api.request('POST', '/v1/deployments', { token: other.token, body: validDeployment('elsewhere') });
  t.is(theirs.status, 201);
  t.is(await clusterOf(theirs.body.id), 'clu_testdefaultcluster0');
  const sameName = await connect(other, 'home');
  t.is(sameName.status, 201);
  t.not(sameName.body.id, res.body.id);

  // While the shared cluster offers nothing, the owner still deploys (on its own); the neighbour, whose own
  // cluster is another, is refused rather than placed on the owner's.
  await api.pool.query(`UPDATE gpu_cluster SET gpus = '[]' WHERE id = 'clu_testdefaultcluster0'`);
  await api.pool.query(`UPDATE gpu_cluster SET deleted_at = now(), status = 'deleted' WHERE id = $1`, [sameName.body.id]);
  try {
    t.is((await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('second') })).status, 201);
    const refused = await api.request('POST', '/v1/deployments', { token: other.token, body: validDeployment('nowhere') });
    t.is(refused.status, 503);
    t.is(refused.body.code, 'GPU_UNAVAILABLE');
    const gpuTypes = async (user: User) => (await api.request('GET', `/v1/gpu-types?orgId=${user.organizationId}`, { token: user.token })).body.filter((g: { available: boolean }) => g.available).map((g: { id: string }) => g.id);
    t.deepEqual(await gpuTypes(owner), ['nvidia-h100-80gb', 'nvidia-l4']);
    t.deepEqual(await gpuTypes(other), []);
  } finally {
    await api.pool.query(`UPDATE gpu_cluster SET gpus = $1 WHERE id = 'clu_testdefaultcluster0'`, [JSON.stringify(['nvidia-h100-80gb', 'nvidia-a100-80gb', 'nvidia-a10g', 'nvidia-l4', 'nvidia-t4'].map((gpuType) => ({ gpuType, count: 64 })))]);
  }

  // Platform administrators see whose it is.
  const admin = await signupAdmin(api);
  const listed = (await api.request('GET', '/v1/admin/clusters', { token: admin.token })).body.find((c: { id: string }) => c.id === res.body.id);
  t.is(listed.organizationId, owner.organizationId);

  // The same name twice in one organization is 409.
  const twice = await connect(owner, 'home');
  t.is(twice.status, 409);
});

test.serial('an own cluster has provisioning circuits of its own: its open circuit refuses nobody else, and nobody else sees it', async (t) => {
  const owner = await signup(api, 'circuit');
  const own = (await connect(owner, 'flaky')).body;
  await api.pool.query(`INSERT INTO circuit (provider, gpu_type, failures, last_failure, opened_at, half_opens_at, updated_at) VALUES ($1, 'nvidia-l4', 5, 'boom', now(), now() + interval '1 hour', now())`, [`kubernetes:${own.id}`]);
  const list = await providers(owner);
  t.is(list.find((p) => p.id === own.id)!.gpus.find((g) => g.gpuType === 'nvidia-l4')!.circuit, 'open');
  t.is(list.find((p) => p.kind === 'shared')!.gpus.find((g) => g.gpuType === 'nvidia-l4')!.circuit, 'closed');
  // The owner's L4 deployment goes to the shared cluster while its own circuit is open; its H100 one stays home.
  const l4 = await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('l4') });
  t.is(await clusterOf(l4.body.id), 'clu_testdefaultcluster0');
  const h100 = await api.request('POST', '/v1/deployments', { token: owner.token, body: { ...validDeployment('h100'), gpu: 'nvidia-h100-80gb' } });
  t.is(await clusterOf(h100.body.id), own.id);

  const circuits = async (user: User) => (await api.request('GET', `/v1/recovery/circuits?orgId=${user.organizationId}`, { token: user.token })).body.map((c: { provider: string }) => c.provider);
  t.true((await circuits(owner)).includes(`kubernetes:${own.id}`));
  const other = await signup(api, 'bystander');
  t.false((await circuits(other)).includes(`kubernetes:${own.id}`));
  t.is((await api.request('POST', '/v1/deployments', { token: other.token, body: validDeployment('l4') })).status, 201);
});

test('bad input: 400 for missing fields and wrong types, 422 naming kubeconfig when it cannot be used or reaches no API server; nothing is stored', async (t) => {
  const user = await signup(api, 'bad-kube');
  const before = await ownClusterCount();
  for (const [body, status, field] of [
    [{ type: 'kubernetes', name: 'x' }, 400, 'kubeconfig'],
    [{ type: 'kubernetes', name: 'x', kubeconfig: 42 }, 400, 'kubeconfig'],
    [{ type: 'kubernetes', name: 'x', kubeconfig, extra: true }, 400, 'extra'],
    [{ type: 'aws', name: 'x', kubeconfig }, 422, 'type'],
    [{ type: 'kubernetes', name: 'Not_A_Label', kubeconfig }, 422, 'name'],
    [{ type: 'kubernetes', name: 'x', kubeconfig: 'just: [text' }, 422, 'kubeconfig'],
    [{ type: 'kubernetes', name: 'x', kubeconfig: 'apiVersion: v1\nkind: Config\n' }, 422, 'kubeconfig'],
  ] as const) {
    const res = await api.request('POST', PROVIDERS, { token: user.token, body });
    t.is(res.status, status, JSON.stringify(body).slice(0, 100));
    t.true(res.body.message.includes(field), res.body.message);
  }
  const unreachable = await connect(user, 'gone', kubeconfig.replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:9'));
  t.is(unreachable.status, 422);
  t.regex(unreachable.body.message, /^Invalid field kubeconfig: could not read the cluster's nodes/);
  // A kubeconfig whose user runs a command: Kiln runs none for an organization.
  const exec = parse(kubeconfig);
  exec.users[0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'aws', args: ['eks', 'get-token', '--cluster-name', 'c'] } };
  const execRes = await connect(user, 'exec', stringify(exec));
  t.is(execRes.status, 422);
  t.regex(execRes.body.message, /kubeconfig/);
  t.is(await ownClusterCount(), before);
  t.deepEqual((await providers(user)).map((p) => p.kind), ['shared']);
});

test('no credential is 401; members, read-only and deployments-only keys cannot connect a cluster; deployments-only keys cannot list', async (t) => {
  const owner = await signup(api, 'perm-owner');
  const before = await ownClusterCount();
  t.is((await api.request('GET', `${PROVIDERS}?orgId=${owner.organizationId}`)).status, 401);
  t.is((await api.request('POST', PROVIDERS, { body: { type: 'kubernetes', name: 'x', kubeconfig } })).status, 401);
  const member = await addMember(api, owner.organizationId, 'member');
  t.is((await api.request('GET', `${PROVIDERS}?orgId=${owner.organizationId}`, { token: member.token })).status, 200, 'a member reads where the organization runs');
  t.is((await api.request('POST', PROVIDERS, { token: member.token, headers: member.as.headers, body: { type: 'kubernetes', name: 'x', kubeconfig } })).status, 403);
  for (const scope of ['read_only', 'deployments_only'] as const) {
    const key = await createApiKey(api, owner.token, scope);
    t.is((await api.request('POST', PROVIDERS, { token: key.key, body: { type: 'kubernetes', name: 'x', kubeconfig } })).status, 403, scope);
    t.is((await api.request('GET', `${PROVIDERS}?orgId=${owner.organizationId}`, { token: key.key })).status, scope === 'read_only' ? 200 : 403, scope);
  }
  t.is(await ownClusterCount(), before);
});

test('another organization\'s orgId is 403; without orgId 400', async (t) => {
  const [user, other] = [await signup(api, 'one'), await signup(api, 'two')];
  t.is((await api.request('GET', `${PROVIDERS}?orgId=${other.organizationId}`, { token: user.token })).status, 403);
  const missing = await api.request('GET', PROVIDERS, { token: user.token });
  t.is(missing.status, 400);
  t.regex(missing.body.message, /orgId/);
});
