// The platform administrator's views across organizations: customers, audit, security, operations,
// analytics; and who may call any /v1/admin route at all.
import { eventually } from '../support/eventually.ts';
import { createCircuitService } from '../../control-plane/recovery/circuits.ts';
import test from 'ava';
import { startAdminApi, type Admin } from '../support/admin.ts';
import { createApiKey, routePermissions, signup, validDeployment, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
let admin: Admin;
test.before(async () => { ({ api, admin } = await startAdminApi(import.meta.filename, { config: { temporalUiUrl: 'http://temporal-ui.test' } })); });
test.after.always(() => api?.close());

async function deploy(token: string, name: string, gpu = 'nvidia-l4') {
  const res = await api.request('POST', '/v1/deployments', { token, body: { ...validDeployment(name), gpu } });
  if (res.status !== 201) throw new Error(`deploy failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

/** Every page of a list, following nextCursor. */
async function allPages(path: string, token = admin.token) {
  const items: { id: string }[] = [];
  let cursor: string | null = null;
  do {
    const res = await api.request('GET', `${path}${path.includes('?') ? '&' : '?'}${cursor ? `cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    items.push(...res.body.data);
    cursor = res.body.pagination.nextCursor;
  } while (cursor);
  return items;
}

test('every admin route: no credential 401, an organization owner 403, an admin\'s read-only key may read but not write', async (t) => {
  const owner = await signup(api, 'owner');
  const ownersDeployment = await deploy(owner.token, 'owned');
  const readOnly = await createApiKey(api, admin.token, 'read_only');
  const bodies: Record<string, unknown> = {
    'POST /v1/admin/feature-flags': { key: 'any-flag' },
    'PATCH /v1/admin/feature-flags/{id}': { enabled: true },
    'POST /v1/admin/reports/generate': { kind: 'customers' },
    'POST /v1/admin/deployments/bulk': { action: 'stop', ids: [ownersDeployment] },
    'POST /v1/admin/notifications': { title: 'Maintenance', message: 'Tonight', severity: 'info' },
    'PATCH /v1/admin/notifications/{id}': { title: 'Changed' },
  };
  const adminRoutes = Object.keys(routePermissions(api.app.routes)).filter((r) => r.includes(' /v1/admin/'));
  t.is(adminRoutes.length, 30, 'feature flags, customers, audit, security, operations, analytics, error tracker, reports, bulk, GPU clusters and their events, notifications, revenue, service keys');
  for (const route of adminRoutes) {
    const [method, template] = route.split(' ') as [string, string];
    const path = template.replace('{id}', 'ffl_unknown');
    const body = bodies[route];
    t.is((await api.request(method, path, { body })).status, 401, `${route} without credential`);
    t.is((await api.request(method, path, { body, token: owner.token })).status, 403, `${route} as an organization owner`);
    t.is((await api.request(method, `${path}${path.includes('?') ? '&' : '?'}orgId=${owner.organizationId}`, { body, token: owner.token })).status, 403, `${route} as owner, naming the own organization`);
    const viaReadOnly = await api.request(method, path, { body, token: readOnly.key });
    if (method === 'GET') t.true([200, 404].includes(viaReadOnly.status), `${route} with an admin's read-only key: ${viaReadOnly.status}`);
    else t.is(viaReadOnly.status, 403, `${route} with an admin's read-only key`);
  }
  const deployment = await api.request('GET', `/api/deployments/${ownersDeployment}`, { token: owner.token });
  t.like(deployment.body.data, { status: 'pending' });
  t.is((await api.pool.query('SELECT running, generation FROM deployment WHERE id = $1', [ownersDeployment])).rows[0].generation, 1, 'nothing was sent');
  t.is((await api.pool.query(`SELECT count(*)::int AS n FROM feature_flag WHERE key = 'any-flag'`)).rows[0].n, 0);
  t.is((await api.pool.query(`SELECT count(*)::int AS n FROM report`)).rows[0].n, 0);
  t.is((await api.pool.query(`SELECT count(*)::int AS n FROM notification`)).rows[0].n, 0);
});

test('GET /v1/admin/customers: every organization with plan, members, deployments by status and usage; cursor pages', async (t) => {
  const a = await signup(api, 'cust-a');
  const b = await signup(api, 'cust-b');
  const first = await deploy(a.token, 'first');
  await deploy(a.token, 'second');
  await api.pool.query(`UPDATE deployment SET status = 'running' WHERE id = $1`, [first]);
  const key = await createApiKey(api, a.token, 'read_only');
  for (let i = 0; i < 3; i++) await api.request('GET', `/v1/deployments?orgId=${a.organizationId}`, { token: key.key });
  // Reads' audit records are written in batches shortly after the answers.
  await eventually('the reads\' audit records', async () => (await api.pool.query('SELECT count(*)::int AS n FROM audit_log WHERE organization_id = $1', [a.organizationId])).rows[0].n === 6);
  await api.pool.query(`UPDATE organization SET plan = 'enterprise', credits_cents = 123456 WHERE id = $1`, [b.organizationId]);

  const customers = await allPages('/v1/admin/customers?limit=2') as unknown as Array<{ id: string; [k: string]: unknown }>;
  const total = (await api.pool.query('SELECT count(*)::int AS n FROM organization')).rows[0].n;
  t.true(customers.length >= total);
  t.is(new Set(customers.map((c) => c.id)).size, customers.length, 'no organization twice');
  const ca = customers.find((c) => c.id === a.organizationId)!;
  t.regex(String(ca.name), /^cust-a org \d+$/);
  t.like(ca, { plan: 'free', members: 1, deployments: { total: 2, byStatus: { running: 1, pending: 1 } } });
  // Two creations, one key creation and three key uses are audited.
  t.like(ca.usage, { requestsLast30Days: 6, creditsCents: 2500 });
  t.truthy(ca.usage && (ca.usage as { lastActivityAt: string }).lastActivityAt);
  t.like(customers.find((c) => c.id === b.organizationId), { plan: 'enterprise', deployments: { total: 0, byStatus: {} }, usage: { requestsLast30Days: 0, lastActivityAt: null, creditsCents: 123456 } });
  t.true(customers.some((c) => c.id === admin.organizationId));

  const enterprise = await api.request('GET', '/v1/admin/customers?plan=enterprise', { token: admin.token });
  t.deepEqual(enterprise.body.data.map((c: { id: string }) => c.id), [b.organizationId]);

  for (const query of ['limit=0', 'limit=101', 'limit=ten', 'plan=gold', 'cursor=forged.cursor']) {
    const res = await api.request('GET', `/v1/admin/customers?${query}`, { token: admin.token });
    t.is(res.status, 400, query);
  }
});

test('GET /v1/admin/audit: records of every organization, with the organization audit\'s filters plus the organization, newest first', async (t) => {
  const a = await signup(api, 'aud-a');
  const b = await signup(api, 'aud-b');
  const keyA = await createApiKey(api, a.token, 'full_access');
  const keyB = await createApiKey(api, b.token, 'full_access');
  const deployment = await deploy(keyB.key, 'audited');

  const all = await allPages('/v1/admin/audit?limit=100') as unknown as Array<{ organization_id: string; created_at: string }>;
  const ids = all.map((r) => r.organization_id);
  t.true(ids.includes(a.organizationId) && ids.includes(b.organizationId), 'both organizations are visible');
  const times = all.map((r) => r.created_at);
  t.deepEqual(times, [...times].sort().reverse());

  const onlyB = await allPages(`/v1/admin/audit?organizationId=${b.organizationId}&limit=1`) as unknown as Array<Record<string, unknown>>;
  t.deepEqual(onlyB.map((r) => r.action).sort(), ['createApiKey', 'createDeploymentV1']);
  t.like(onlyB.find((r) => r.action === 'createDeploymentV1'), {
    organization_id: b.organizationId, user_id: b.userId, api_key_id: keyB.id, resource_type: 'deployment', resource_id: deployment, status_code: 201,
  });
  t.like(onlyB.find((r) => r.action === 'createApiKey'), { resource_id: keyB.id, api_key_id: null });
  t.deepEqual(Object.keys(onlyB[0]!).sort(), ['action', 'api_key_id', 'created_at', 'id', 'ip_address', 'organization_id', 'resource_id', 'resource_type', 'status_code', 'user_id']);

  const byUser = await api.request('GET', `/v1/admin/audit?userId=${a.userId}`, { token: admin.token });
  t.deepEqual(byUser.body.data.map((r: { resource_id: string }) => r.resource_id), [keyA.id]);
  const byKey = await api.request('GET', `/v1/admin/audit?apiKeyId=${keyB.id}`, { token: admin.token });
  t.deepEqual(byKey.body.data.map((r: { resource_id: string }) => r.resource_id), [deployment]);
  const byAction = await api.request('GET', `/v1/admin/audit?action=createDeploymentV1&resourceType=deployment&resourceId=${deployment}`, { token: admin.token });
  t.is(byAction.body.data.length, 1);
  const oldestFirst = await api.request('GET', `/v1/admin/audit?organizationId=${b.organizationId}&sort=created_at`, { token: admin.token });
  t.deepEqual(oldestFirst.body.data.map((r: { action: string }) => r.action), ['createApiKey', 'createDeploymentV1']);
  const future = await api.request('GET', `/v1/admin/audit?organizationId=${b.organizationId}&from=2999-01-01T00:00:00Z`, { token: admin.token });
  t.deepEqual(future.body.data, []);
  const past = await api.request('GET', `/v1/admin/audit?organizationId=${b.organizationId}&to=2000-01-01T00:00:00Z`, { token: admin.token });
  t.deepEqual(past.body.data, []);

  for (const query of ['from=yesterday', 'from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z', 'limit=101', 'sort=action', 'organizationId=', 'cursor=abc']) {
    const res = await api.request('GET', `/v1/admin/audit?${query}`, { token: admin.token });
    t.is(res.status, 400, query);
  }
  // The organizations' own keys see nothing of the platform audit.
  t.is((await api.request('GET', `/v1/admin/audit?organizationId=${a.organizationId}`, { token: keyA.key })).status, 403);
});

test('GET /v1/admin/security: failed sign-ins, locked accounts, keys not rotated for 90 days, keys never used', async (t) => {
  const careless = await signup(api, 'careless');
  const attacked = await signup(api, 'attacked');
  for (let i = 0; i < 2; i++) await api.request('POST', '/v1/auth/signin', { body: { email: careless.email, password: 'wrong password 1' } });
  for (let i = 0; i < 5; i++) await api.request('POST', '/v1/auth/signin', { body: { email: attacked.email, password: 'wrong password 2' } });
  t.is((await api.request('POST', '/v1/auth/signin', { body: { email: attacked.email, password: attacked.password } })).status, 429, 'the account is locked');

  const unused = await createApiKey(api, careless.token, 'read_only');
  const used = await createApiKey(api, careless.token, 'read_only');
  await api.request('GET', `/v1/deployments?orgId=${careless.organizationId}`, { token: used.key });
  // A key's last use is written with the batched audit records of reads, shortly after the answer.
  await eventually('the key\'s last use to be recorded', async () => (await api.pool.query('SELECT last_used_at FROM api_key WHERE id = $1', [used.id])).rows[0].last_used_at !== null);
  const old = await createApiKey(api, careless.token, 'full_access');
  await api.pool.query(`UPDATE api_key SET created_at = now() - interval '100 days' WHERE id = $1`, [old.id]);

  const res = await api.request('GET', '/v1/admin/security', { token: admin.token });
  t.is(res.status, 200);
  const s = res.body;
  t.like(s.failedSignins, { windowMinutes: 15, lockAfter: 5 });
  t.like(s.failedSignins.accounts.find((a: { email: string }) => a.email === careless.email), { failures: 2, locked: false });
  t.like(s.failedSignins.accounts.find((a: { email: string }) => a.email === attacked.email), { failures: 5, locked: true });
  const locked = s.lockedAccounts.find((a: { email: string }) => a.email === attacked.email);
  t.true(Date.parse(locked.lockedUntil) > Date.now());
  t.false(s.lockedAccounts.some((a: { email: string }) => a.email === careless.email));

  const neverUsed = s.keysNeverUsed.items.map((k: { id: string }) => k.id);
  t.true(neverUsed.includes(unused.id));
  t.false(neverUsed.includes(used.id));
  t.like(s.keysNotRotated, { olderThanDays: 90 });
  t.like(s.keysNotRotated.items.find((k: { id: string }) => k.id === old.id), { organizationId: careless.organizationId, rotatedAt: null, scope: 'full_access' });
  t.false(s.keysNotRotated.items.some((k: { id: string }) => k.id === unused.id));
  t.true(s.keysNotRotated.total >= 1 && s.keysNeverUsed.total >= 2);

  // Rotating the key takes it off the list; revoking a key takes it off both.
  t.is((await api.request('PUT', '/v1/settings/api-keys', { token: careless.token, body: { id: old.id } })).status, 200);
  t.is((await api.request('DELETE', `/v1/settings/api-keys?id=${unused.id}`, { token: careless.token })).status, 200);
  const after = (await api.request('GET', '/v1/admin/security', { token: admin.token })).body;
  t.false(after.keysNotRotated.items.some((k: { id: string }) => k.id === old.id));
  t.false(after.keysNeverUsed.items.some((k: { id: string }) => k.id === unused.id));

  // A successful sign-in clears the count.
  t.is((await api.request('POST', '/v1/auth/signin', { body: { email: careless.email, password: careless.password } })).status, 200);
  const cleared = (await api.request('GET', '/v1/admin/security', { token: admin.token })).body;
  t.false(cleared.failedSignins.accounts.some((a: { email: string }) => a.email === careless.email));
});

// Serial (ava runs serial tests before the others): the counts it compares are not changed meanwhile.
test.serial('GET /v1/admin/operations: deployments by status, failed deployments with reason and workflow; circuits not tracked without the hook', async (t) => {
  const owner = await signup(api, 'ops');
  const broken = await deploy(owner.token, 'broken');
  await deploy(owner.token, 'fine');
  await api.pool.query(`UPDATE deployment SET status = 'failed', failure_reason = 'ImagePullBackOff: model image not found' WHERE id = $1`, [broken]);

  const res = await api.request('GET', '/v1/admin/operations', { token: admin.token });
  t.is(res.status, 200);
  const counts = (await api.pool.query(`SELECT status, count(*)::int AS n FROM deployment WHERE deleted_at IS NULL GROUP BY status`)).rows;
  for (const { status, n } of counts) t.is(res.body.deployments.byStatus[status], n, status);
  t.is(res.body.deployments.total, counts.reduce((a: number, r: { n: number }) => a + r.n, 0));
  t.is(res.body.deployments.byStatus.stopped, 0, 'every status is listed');
  const failed = res.body.failedWorkflows.find((f: { deploymentId: string }) => f.deploymentId === broken);
  t.like(failed, {
    name: 'broken', organizationId: owner.organizationId, failureReason: 'ImagePullBackOff: model image not found',
    // Its workflow's page in the Temporal Web UI (the workflow id is the deployment id).
    workflowUrl: `http://temporal-ui.test/namespaces/default/workflows/${broken}`,
  });
  t.regex(failed.organizationName, /^ops org \d+$/, 'named as its owner named it at sign-up');
  t.like(failed.workflow, { status: 'RUNNING', pendingActivities: [] }, 'what Temporal says of the deployment\'s workflow');
});

test('GET /v1/admin/operations lists the provisioning circuits that are open', async (t) => {
  const { token } = admin;
  const circuits = createCircuitService();
  for (let i = 1; i <= 5; i++) await circuits.recordFailure(api.orm.em.fork(), { provider: 'kubernetes', gpuType: 'nvidia-a10g' }, `pulumi up failed (${i})`);
  const res = await api.request('GET', '/v1/admin/operations', { token });
  t.is(res.status, 200);
  t.like(res.body.openCircuits, [{ provider: 'kubernetes', gpuType: 'nvidia-a10g', state: 'open', failures: 5, lastFailure: 'pulumi up failed (5)' }]);
});

test('GET /v1/admin/analytics: daily sign-ups, active organizations and new deployments by GPU type', async (t) => {
  const early = await signup(api, 'early');
  const late = await signup(api, 'late');
  const d1 = await deploy(early.token, 'march-l4', 'nvidia-l4');
  const d2 = await deploy(early.token, 'march-t4', 'nvidia-t4');
  const d3 = await deploy(late.token, 'march-l4b', 'nvidia-l4');
  // Moved into a quiet window of their own, so the test's other sign-ups do not count.
  await api.pool.query(`UPDATE "user" SET created_at = '2025-03-01T10:00:00Z' WHERE id = $1`, [early.userId]);
  await api.pool.query(`UPDATE "user" SET created_at = '2025-03-03T23:59:00Z' WHERE id = $1`, [late.userId]);
  await api.pool.query(`UPDATE deployment SET created_at = '2025-03-01T12:00:00Z' WHERE id = ANY($1)`, [[d1, d2]]);
  await api.pool.query(`UPDATE deployment SET created_at = '2025-03-03T01:00:00Z' WHERE id = $1`, [d3]);
  await api.pool.query(`UPDATE audit_log SET created_at = '2025-03-01T12:00:00Z' WHERE organization_id = $1`, [early.organizationId]);
  await api.pool.query(`UPDATE audit_log SET created_at = '2025-03-03T01:00:00Z' WHERE organization_id = $1`, [late.organizationId]);

  const res = await api.request('GET', '/v1/admin/analytics?from=2025-03-01&to=2025-03-03', { token: admin.token });
  t.is(res.status, 200);
  t.deepEqual(res.body, {
    from: '2025-03-01', to: '2025-03-03',
    days: [
      { day: '2025-03-01', signups: 1, activeOrganizations: 1, deploymentsByGpu: { 'nvidia-l4': 1, 'nvidia-t4': 1 } },
      { day: '2025-03-02', signups: 0, activeOrganizations: 0, deploymentsByGpu: {} },
      { day: '2025-03-03', signups: 1, activeOrganizations: 1, deploymentsByGpu: { 'nvidia-l4': 1 } },
    ],
    totals: { signups: 2, activeOrganizations: 2, deploymentsByGpu: { 'nvidia-l4': 2, 'nvidia-t4': 1 } },
  });

  const byDefault = await api.request('GET', '/v1/admin/analytics', { token: admin.token });
  t.is(byDefault.body.days.length, 30);
  t.is(byDefault.body.to, new Date().toISOString().slice(0, 10));
  t.true(byDefault.body.days.at(-1).signups >= 1, 'today\'s sign-ups (the administrator\'s own among them)');

  for (const query of ['from=2025-03-03&to=2025-03-01', 'from=2024-01-01&to=2025-03-01', 'from=March', 'to=2025-02-30']) {
    const bad = await api.request('GET', `/v1/admin/analytics?${query}`, { token: admin.token });
    t.is(bad.status, 400, query);
    t.true(bad.body.message.includes('from') || bad.body.message.includes('to'), bad.body.message);
  }
});
