// Crashes and restarts mid-way lose nothing: a worker killed during `pulumi up`, the API and the Temporal
// server restarted while deployments change. Checked through the public API and in the cluster. And the API
// and the worker share no folder (test/support/kiln.ts), as on hosts of their own: what one writes the other
// reads through the database.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import pg from 'pg';

import { eventually } from '../support/eventually.ts';
import { deploymentWhen, newTenant, startKiln, type Kiln } from '../support/kiln.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';

const ADMIN_EMAIL = 'ops@resilience.example';

interface Context { kiln: Kiln; tenant: Awaited<ReturnType<typeof newTenant>> }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const kiln = await startKiln(import.meta.filename, { nodePools: [{ gpuType: 'nvidia-l4', nodes: 4, gpusPerNode: 1 }], env: { KILN_ADMIN_EMAILS: ADMIN_EMAIL } });
  t.context = { kiln } as Context; // stopped by the after hook even if the rest of this set-up fails
  t.context = { kiln, tenant: await newTenant(kiln, 'resilience') };
});
test.after.always(async (t) => t.context.kiln?.stop());

const untilSettled = (t: { context: Context }, id: string, what: string) =>
  deploymentWhen(t.context.kiln, t.context.tenant.key, id, (d) => d.status === 'running' || d.status === 'failed', what, 240_000);

async function create(t: { context: Context }, name: string, replicas = 1) {
  const res = await t.context.kiln.request('POST', '/api/deployments', {
    token: t.context.tenant.key,
    body: { name, model: 'Qwen/Qwen2.5-1.5B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas, minReplicas: 1, maxReplicas: 4 },
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id as string;
}

/** The Kubernetes objects of one deployment, counted by kind: one set is one Deployment and one Service. */
async function objectsOf(t: { context: Context }, name: string) {
  const namespace = namespaceOf(t.context.tenant.organizationId);
  const selector = `?labelSelector=${encodeURIComponent(`app.kubernetes.io/instance=${name}`)}`;
  const count = async (path: string) => (await t.context.kiln.cluster.api.get<{ items: unknown[] }>(`${path}${selector}`)).items.length;
  return {
    deployments: await count(`/apis/apps/v1/namespaces/${namespace}/deployments`),
    services: await count(`/api/v1/namespaces/${namespace}/services`),
    readyPods: (await t.context.kiln.cluster.api.get<{ items: { status: { conditions?: { type: string; status: string }[] } }[] }>(`/api/v1/namespaces/${namespace}/pods${selector}`))
      .items.filter((p) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length,
  };
}

test.serial('a worker killed during `pulumi up` leaves a deployment that still reaches running, with one set of objects', async (t) => {
  const { kiln } = t.context;
  const id = await create(t, 'survivor');
  // The engine holds the stack's lock (a row of the worker's default state backend, in Kiln's database) for exactly as long as `pulumi up` runs.
  const database = new pg.Pool({ connectionString: kiln.databaseUrl, max: 1 });
  t.teardown(() => database.end());
  const locks = async () => (await database.query('SELECT key FROM pulumi_state WHERE key LIKE $1', [`%/.pulumi/locks/organization/kiln-deployment/${id}/%`])).rowCount;
  await eventually('pulumi up to be under way', async () => ((await locks()) ?? 0) > 0, 120_000);
  await kiln.killWorker();
  await kiln.startWorker();

  const deployment = await untilSettled(t, id, 'running after the crash');
  t.is(deployment.status, 'running', deployment.failureReason ?? '');
  t.deepEqual(await objectsOf(t, 'survivor'), { deployments: 1, services: 1, readyPods: 1 });
});

test.serial('the API and the Temporal server restarted while deployments change lose nothing', async (t) => {
  const { kiln, tenant } = t.context;
  const first = await create(t, 'steady');
  await kiln.restartApi();
  const second = await create(t, 'restarted');
  await untilSettled(t, first, 'the first running');

  // A change sent while Temporal is down is saved, answered, and delivered once it is back.
  await kiln.stopTemporal();
  const scaled = await kiln.request('POST', `/v1/deployments/${first}/actions`, { token: tenant.key, body: { action: 'scale', replicas: 2 } });
  t.is(scaled.status, 200, JSON.stringify(scaled.body));
  await kiln.restartApi();
  await kiln.startTemporal();

  for (const [id, name, replicas] of [[first, 'steady', 2], [second, 'restarted', 1]] as const) {
    const deployment = await deploymentWhen(kiln, tenant.key, id, (d) => (d.status === 'running' && d.currentReplicas === replicas) || d.status === 'failed', `${name} running`, 240_000);
    t.is(deployment.status, 'running', deployment.failureReason ?? '');
    t.deepEqual(await objectsOf(t, name), { deployments: 1, services: 1, readyPods: replicas });
  }
});

test.serial('a report the worker process writes is downloaded from the API process, though their DATA_DIRs differ', async (t) => {
  const { kiln, tenant } = t.context;
  const signup = await kiln.request('POST', '/v1/auth/signup', {
    body: { email: ADMIN_EMAIL, password: 'correct horse battery', name: 'Operations', organizationName: 'Operations' },
  });
  t.is(signup.status, 201);
  const token = signup.body.access_token as string;
  const generated = await kiln.request('POST', '/v1/admin/reports/generate', { token, body: { kind: 'customers' } });
  t.is(generated.status, 201);
  const report = await eventually('the report to be written', async () => {
    const res = await kiln.request('GET', generated.body.statusUrl, { token });
    return ['ready', 'failed'].includes(res.body.status) && res.body;
  });
  t.like(report, { status: 'ready', error: null });

  const download = await kiln.request('GET', generated.body.downloadUrl, { token });
  t.is(download.status, 200);
  const csv = download.body as string;
  t.is(Buffer.byteLength(csv), report.bytes);
  t.true(csv.startsWith('organization_id,name,plan,'));
  t.true(csv.includes(`${tenant.organizationId},resilience org,growth,`), 'the tenant\'s organization is listed');
  t.false(existsSync(join(kiln.dataDir, 'reports')) || existsSync(join(kiln.apiDataDir, 'reports')), 'no report on either disk');
  // The tenant, not an administrator, cannot fetch it.
  t.is((await kiln.request('GET', generated.body.downloadUrl, { token: tenant.token })).status, 403);
});
