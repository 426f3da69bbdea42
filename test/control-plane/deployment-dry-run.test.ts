// The dry run over HTTP: GET /v1/deployments/validate answers the rules a form checks against; POST answers
// every check creation makes with its reason and the cost, and changes nothing. No worker runs beside this test
// API, so a request that passes every check gets the preview's failure ("no worker answered"); the plan itself,
// from the real Pulumi engine, is tested with a worker in test/workflows/cluster-placement.test.ts.
import test from 'ava';
import { createApiKey, signup, startTestApi, type TestApi, validDeployment } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

const count = async (token: string, organizationId: string) => (await api.request('GET', `/v1/deployments?orgId=${organizationId}`, { token })).body.data.length;
const failed = (body: { checks: Array<{ check: string; passed: boolean }> }) => body.checks.filter((c) => !c.passed).map((c) => c.check);

test('GET /v1/deployments/validate answers the rules: name and model patterns, bounds, sizes, GPU types available now, the caller\'s plan', async (t) => {
  const { token } = await signup(api);
  const res = await api.request('GET', '/v1/deployments/validate', { token });
  t.is(res.status, 200);
  t.like(res.body, {
    name: { maxLength: 63 }, runtimes: ['vllm'], replicas: { min: 0, max: 100 }, gpusPerReplica: [1, 2, 4, 8],
    dtypes: ['auto', 'bfloat16', 'float16', 'float32'], plan: { name: 'free', creditsCents: 2500, maxHourlyCents: 2500, rateLimit: { perMinute: 60 } },
  });
  t.true(new RegExp(res.body.name.pattern).test('llama-chat'));
  t.false(new RegExp(res.body.name.pattern).test('Llama_Chat'));
  t.true(res.body.vllmArgs.managedFlags.includes('--tensor-parallel-size'));
  t.like(res.body.gpuTypes.find((g: { id: string }) => g.id === 'nvidia-l4'), { memoryGb: 24, hourlyPriceUsd: 0.8, available: true });

  t.is((await api.request('GET', '/v1/deployments/validate')).status, 401);
  // A read-only key may read the rules.
  const readOnly = await createApiKey(api, token, 'read_only');
  t.is((await api.request('GET', '/v1/deployments/validate', { token: readOnly.key })).status, 200);
});

test('POST /v1/deployments/validate passes every check of a good request, with the settled sizing and cost, and creates nothing', async (t) => {
  const { token, organizationId } = await signup(api);
  const res = await api.request('POST', '/v1/deployments/validate', { token, body: { ...validDeployment(), replicas: 2 } });
  t.is(res.status, 200);
  t.deepEqual(res.body.checks.map((c: { check: string }) => c.check), ['name', 'model', 'replicas', 'model_fit', 'accepting', 'placement', 'capacity', 'credits', 'budget']);
  // The test cluster has no kubeconfig: what it offers less what Kiln's deployments hold there.
  t.like(res.body.capacity, [{ name: 'test-cluster', gpusFree: 64, replicasFit: 64, measuredFrom: 'records', note: 'Kiln has no kubeconfig for it yet: counted from its record' }]);
  t.is(res.body.checks.find((c: { check: string }) => c.check === 'capacity').reason, '2 of 2 replicas fit now on GPU cluster test-cluster: 64 GPU(s) free by Kiln\'s records, 1 per replica (Kiln has no kubeconfig for it yet: counted from its record)');
  t.deepEqual(failed(res.body), []);
  t.like(res.body.fit, { verdict: 'fits_now', replicas: 2, replicasFit: 2, growth: null });
  t.regex(res.body.checks.find((c: { check: string }) => c.check === 'model_fit').reason, /^1 GPU\(s\) per replica, 41984 tokens of context, dtype auto$/);
  t.like(res.body.deployment, { name: 'llama-chat', gpusPerReplica: 1, contextLength: 41_984, replicas: 2, cluster: { name: 'test-cluster' } });
  // Two L4s at 80 cents an hour: the free grant of 2,500 cents lasts 15.6 hours.
  t.like(res.body.cost, { hourlyCents: 160, dailyCents: 3840, monthlyCents: 115_200, balanceCents: 2500, hoursCovered: 15.6 });
  // Without a worker the preview has no plan, and says why: the request is not valid yet.
  t.like(res.body.plan, { resources: [], failure: 'no worker answered the preview within 2 s' });
  t.false(res.body.valid);
  t.is(await count(token, organizationId), 0);

  // Without the preview (a form checking itself), the same checks answer at once, and pass.
  const quick = await api.request('POST', '/v1/deployments/validate?preview=false', { token, body: { ...validDeployment(), replicas: 2 } });
  t.like(quick.body, { valid: true, plan: null, cost: { hourlyCents: 160 } });
  t.is((await api.request('POST', '/v1/deployments/validate?preview=maybe', { token, body: validDeployment() })).status, 400);
});

test('every failing check is reported with its reason, not only the first; no preview runs and nothing is created', async (t) => {
  const { token, organizationId } = await signup(api);
  await api.request('POST', '/v1/deployments', { token, body: validDeployment('taken') });
  const res = await api.request('POST', '/v1/deployments/validate', {
    token, body: { name: 'taken', model: 'meta-llama/Llama-3.1-70B-Instruct', runtime: 'vllm', gpu: 'nvidia-t4', replicas: 10, gpusPerReplica: 8 },
  });
  t.is(res.status, 200);
  t.false(res.body.valid);
  t.deepEqual(failed(res.body), ['name', 'model_fit', 'capacity', 'credits']);
  const reason = (check: string) => res.body.checks.find((c: { check: string }) => c.check === check).reason;
  t.is(reason('name'), 'A deployment named taken already exists in this organization');
  t.regex(reason('model_fit'), /^Invalid field gpusPerReplica: meta-llama\/Llama-3\.1-70B-Instruct on NVIDIA T4 16GB: 8 GPU\(s\) .*the weights alone exceed/);
  // Ten replicas of eight T4s: 80 x 53 cents an hour, more than the 2,500 cents of the free grant.
  t.is(reason('capacity'), 'Only 8 of 10 replicas fit now on GPU cluster test-cluster: 64 GPU(s) free by Kiln\'s records, 8 per replica (Kiln has no kubeconfig for it yet: counted from its record); the cluster has no node pool Kiln can grow; lower replicas, or free or add GPUs');
  // A kubernetes cluster's nodes are not Kiln's to add: the replicas cannot fit.
  t.like(res.body.fit, { verdict: 'cannot_fit', replicas: 10, replicasFit: 8, growth: null, reason: reason('capacity') });
  t.is(reason('credits'), 'Not enough credits for this deployment');
  t.like(res.body.cost, { hourlyCents: 4240 });
  t.is(res.body.plan, null);
  t.is(await count(token, organizationId), 1);
});

test('a name taken in another organization is free in this one', async (t) => {
  const other = await signup(api, 'other');
  await api.request('POST', '/v1/deployments', { token: other.token, body: validDeployment('shared-name') });
  const { token } = await signup(api);
  const res = await api.request('POST', '/v1/deployments/validate', { token, body: validDeployment('shared-name') });
  t.true(res.body.checks.find((c: { check: string }) => c.check === 'name').passed);
});

test('POST /v1/deployments/validate: bad input is 400/422 naming the field, no credential 401, a read-only key 403', async (t) => {
  const { token } = await signup(api);
  const missing = await api.request('POST', '/v1/deployments/validate', { token, body: { model: 'a/b', runtime: 'vllm', gpu: 'nvidia-l4' } });
  t.is(missing.status, 400);
  t.is(missing.body.message, 'Invalid field name: Invalid input: expected string, received undefined');
  const managed = await api.request('POST', '/v1/deployments/validate', { token, body: { ...validDeployment(), vllmArgs: ['--port=9000'] } });
  t.is(managed.status, 422);
  t.is(managed.body.message, "Invalid field vllmArgs: --port is set by Kiln from the deployment's own fields");
  t.is((await api.request('POST', '/v1/deployments/validate', { body: validDeployment() })).status, 401);
  const readOnly = await createApiKey(api, token, 'read_only');
  t.is((await api.request('POST', '/v1/deployments/validate', { token: readOnly.key, body: validDeployment() })).status, 403);
  // A deployments-only key may check what it may create.
  const deploymentsOnly = await createApiKey(api, token, 'deployments_only');
  t.is((await api.request('POST', '/v1/deployments/validate', { token: deploymentsOnly.key, body: { ...validDeployment(), model: 'meta-llama/Llama-3.1-70B-Instruct' } })).status, 200);
});

// The test API's Hub is a closed port: the Hub cannot be reached, so a model only the Hub could know cannot be checked.
test('with the Hugging Face Hub unreachable, the model check is unverified with the reason: allowed by default (the answer\'s notices say so), refused with 422 and nothing created where the organization refuses unverified models', async (t) => {
  const { token, organizationId } = await signup(api);
  const model = 'nope/does-not-exist-xyz';
  const reason = /^nope\/does-not-exist-xyz could not be checked: The Hugging Face Hub could not describe nope\/does-not-exist-xyz: it could not be reached/;
  const modelCheck = (body: { checks: Array<{ check: string; passed: boolean; status: string; reason: string }> }) => body.checks.find((c) => c.check === 'model')!;

  t.is((await api.request('GET', `/v1/settings/organization?orgId=${organizationId}`, { token })).body.unverifiedModels, 'allow');
  const dryRun = await api.request('POST', '/v1/deployments/validate?preview=false', { token, body: { ...validDeployment('unverified'), model } });
  t.is(dryRun.status, 200);
  t.like(modelCheck(dryRun.body), { passed: false, status: 'unverified' });
  t.regex(modelCheck(dryRun.body).reason, reason);
  t.regex(modelCheck(dryRun.body).reason, /the organization allows unverified models/);
  t.true(dryRun.body.valid, 'allowed: creation would go ahead');
  t.true(dryRun.body.checks.filter((c: { check: string }) => c.check !== 'model').every((c: { status: string }) => c.status === 'passed'));

  const created = await api.request('POST', '/v1/deployments', { token, body: { ...validDeployment('unverified'), model } });
  t.is(created.status, 201);
  t.like(created.body, { name: 'unverified', status: 'pending' });
  t.is(created.body.notices.length, 1);
  t.regex(created.body.notices[0], /^The model check is unverified: nope\/does-not-exist-xyz could not be checked: The Hugging Face Hub could not describe/);
  // A model the catalog knows needs no Hub: its check passes and creation says nothing.
  const known = await api.request('POST', '/v1/deployments', { token, body: validDeployment('known') });
  t.deepEqual(known.body.notices, []);

  const refuse = await api.request('POST', '/v1/settings/organization', { token, body: { unverifiedModels: 'refuse' } });
  t.is(refuse.status, 200);
  t.is(refuse.body.unverifiedModels, 'refuse');
  const refusedDryRun = await api.request('POST', '/v1/deployments/validate?preview=false', { token, body: { ...validDeployment('unverified-2'), model } });
  t.like(modelCheck(refusedDryRun.body), { passed: false, status: 'unverified' });
  t.regex(modelCheck(refusedDryRun.body).reason, /the organization refuses unverified models/);
  t.false(refusedDryRun.body.valid);
  const before = await count(token, organizationId);
  const refused = await api.request('POST', '/v1/deployments', { token, body: { ...validDeployment('unverified-2'), model } });
  t.is(refused.status, 422);
  t.like(refused.body, { code: 'VALIDATION_ERROR' });
  t.regex(JSON.stringify(refused.body), /nope\/does-not-exist-xyz could not be checked: The Hugging Face Hub could not describe nope\/does-not-exist-xyz: it could not be reached.*the organization refuses unverified models/);
  t.is(await count(token, organizationId), before);
  t.is((await api.request('POST', '/v1/settings/organization', { token, body: { unverifiedModels: 'sometimes' } })).status, 422);
});
