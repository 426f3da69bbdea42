// Twenty deployments of three organizations created at once all reach running, and each organization sees
// only its own, in the API and in the cluster (one namespace each).
import test from 'ava';

import { deploymentWhen, newTenant, startKiln, type Kiln } from '../support/kiln.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';

let kiln: Kiln;
test.before(async () => {
  kiln = await startKiln(import.meta.filename, { nodePools: [{ gpuType: 'nvidia-l4', nodes: 20, gpusPerNode: 1 }] });
});
test.after.always(async () => kiln?.stop());

test('20 deployments across 3 organizations at once: all running, each organization sees only its own', async (t) => {
  const tenants = await Promise.all(['alpha', 'beta', 'gamma'].map((label) => newTenant(kiln, label)));
  const wanted = Array.from({ length: 20 }, (_, i) => ({ tenant: tenants[i % 3]!, name: `model-${i}` }));
  const created = await Promise.all(wanted.map(async ({ tenant, name }) => {
    const res = await kiln.request('POST', '/api/deployments', {
      token: tenant.key, body: { name, model: 'Qwen/Qwen2.5-0.5B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' },
    });
    t.is(res.status, 201, JSON.stringify(res.body));
    return { tenant, name, id: res.body.data.id as string };
  }));

  const settled = await Promise.all(created.map(({ tenant, id }) =>
    deploymentWhen(kiln, tenant.key, id, (d) => d.status === 'running' || d.status === 'failed', `${id} settled`, 600_000)));
  t.deepEqual(settled.filter((d) => d.status !== 'running').map((d) => `${d.name}: ${d.failureReason}`), []);

  for (const tenant of tenants) {
    const mine = created.filter((c) => c.tenant === tenant);
    const listed = await kiln.request('GET', '/api/deployments?limit=100', { token: tenant.key });
    t.deepEqual(listed.body.data.map((d: { id: string }) => d.id).sort(), mine.map((c) => c.id).sort());
    const others = created.filter((c) => c.tenant !== tenant);
    for (const other of others.slice(0, 3)) t.is((await kiln.request('GET', `/api/deployments/${other.id}`, { token: tenant.key })).status, 404);
    const inCluster = await kiln.cluster.api.get<{ items: { metadata: { name: string } }[] }>(`/apis/apps/v1/namespaces/${namespaceOf(tenant.organizationId)}/deployments`);
    t.deepEqual(inCluster.items.map((d) => d.metadata.name).sort(), mine.map((c) => c.name).sort());
  }
});
