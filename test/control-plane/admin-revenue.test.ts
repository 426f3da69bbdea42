// GET /v1/admin/revenue: plans at list prices, GPU run rate of live deployments, credits outstanding.
// Serial, first the figures: they cover every organization and deployment of this file's database.
import test from 'ava';
import { PLAN_MONTHLY_PRICE_CENTS } from '../../catalog/plans.ts';
import { startAdminApi, type Admin } from '../support/admin.ts';
import { createApiKey, signup, validDeployment, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
let admin: Admin;
test.before(async () => { ({ api, admin } = await startAdminApi(import.meta.filename)); });
test.after.always(() => api?.close());

/** An organization on `plan` with `credits` cents. */
async function organization(label: string, plan: string, credits: number) {
  const user = await signup(api, label);
  await api.pool.query('UPDATE organization SET plan = $2, credits_cents = $3 WHERE id = $1', [user.organizationId, plan, credits]);
  return user;
}

/** A deployment created through the API, then put in the given state as its workflow would. */
/** `replicas` run now (as the workflow records them); the count asked for is one more, which the run rate ignores. */
async function deployment(token: string, name: string, state: { gpu: string; status: string; replicas: number; deleted?: boolean }) {
  const res = await api.request('POST', '/v1/deployments', { token, body: validDeployment(name) });
  if (res.status !== 201) throw new Error(`deploy failed: ${res.status} ${JSON.stringify(res.body)}`);
  await api.pool.query(
    `UPDATE deployment SET gpu = $2, status = $3, current_replicas = $4, replicas = $4 + 1, max_replicas = greatest(max_replicas, $4 + 1), deleted_at = CASE WHEN $5 THEN now() END WHERE id = $1`,
    [res.body.id, state.gpu, state.status, state.replicas, state.deleted ?? false],
  );
}

test.serial('the figures: organizations by plan, MRR at list prices, GPU spend of live deployments, credits outstanding', async (t) => {
  const empty = await api.request('GET', '/v1/admin/revenue', { token: admin.token });
  t.is(empty.status, 200);
  t.deepEqual(empty.body.gpuSpend, { liveStatuses: ['deploying', 'running', 'scaling', 'updating'], hourlyCents: 0, projected30DaysCents: 0, byGpuType: {} });

  await api.pool.query('UPDATE organization SET credits_cents = 1000 WHERE id = $1', [admin.organizationId]);
  const startup = await organization('startup-a', 'startup', 2000);
  await organization('startup-b', 'startup', 0);
  const growth = await organization('growth', 'growth', 12_345);
  await organization('enterprise', 'enterprise', 500_000);
  // Deployments need credits to be created: the growth organization's are made before its balance is set.
  await api.pool.query('UPDATE organization SET credits_cents = 1000000 WHERE id = $1', [growth.organizationId]);
  await deployment(growth.token, 'l4-running', { gpu: 'nvidia-l4', status: 'running', replicas: 2 });
  await deployment(growth.token, 'h100-scaling', { gpu: 'nvidia-h100-80gb', status: 'scaling', replicas: 3 });
  await deployment(growth.token, 'l4-pending', { gpu: 'nvidia-l4', status: 'pending', replicas: 4 });
  await deployment(growth.token, 'l4-stopped', { gpu: 'nvidia-l4', status: 'stopped', replicas: 5 });
  await deployment(growth.token, 'l4-deleted', { gpu: 'nvidia-l4', status: 'running', replicas: 6, deleted: true });
  await deployment(startup.token, 't4-deploying', { gpu: 'nvidia-t4', status: 'deploying', replicas: 1 });
  await api.pool.query('UPDATE organization SET credits_cents = 12345 WHERE id = $1', [growth.organizationId]);

  const res = await api.request('GET', '/v1/admin/revenue', { token: admin.token });
  t.is(res.status, 200);
  t.deepEqual(res.body, {
    currency: 'usd',
    organizations: { total: 5, byPlan: { free: 1, startup: 2, growth: 1, enterprise: 1 } },
    planPricesCents: { free: 0, startup: 4900, growth: 49_900, enterprise: 249_900 },
    monthlyRecurringRevenueCents: { total: 2 * 4900 + 49_900 + 249_900, byPlan: { free: 0, startup: 9800, growth: 49_900, enterprise: 249_900 } },
    gpuSpend: {
      liveStatuses: ['deploying', 'running', 'scaling', 'updating'],
      // L4 $0.80, H100 $4.50, T4 $0.53 per GPU-hour (catalog/gpu-types.ts); pending, stopped and deleted ones do not count.
      hourlyCents: 2 * 80 + 3 * 450 + 53,
      projected30DaysCents: (2 * 80 + 3 * 450 + 53) * 720,
      byGpuType: {
        'nvidia-h100-80gb': { deployments: 1, replicas: 3, hourlyCents: 1350, projected30DaysCents: 1350 * 720 },
        'nvidia-l4': { deployments: 1, replicas: 2, hourlyCents: 160, projected30DaysCents: 160 * 720 },
        'nvidia-t4': { deployments: 1, replicas: 1, hourlyCents: 53, projected30DaysCents: 53 * 720 },
      },
    },
    creditsOutstandingCents: 1000 + 2000 + 0 + 12_345 + 500_000,
  });
  t.deepEqual(res.body.planPricesCents, PLAN_MONTHLY_PRICE_CENTS, 'the prices are the catalog\'s');
});

test.serial('only platform administrators: no credential 401, an organization owner 403, an admin\'s read-only key reads', async (t) => {
  const owner = await signup(api, 'owner');
  const readOnly = await createApiKey(api, admin.token, 'read_only');
  t.is((await api.request('GET', '/v1/admin/revenue')).status, 401);
  const forbidden = await api.request('GET', '/v1/admin/revenue', { token: owner.token });
  t.is(forbidden.status, 403);
  t.is(forbidden.body.creditsOutstandingCents, undefined, 'no figures leak');
  t.is((await api.request('GET', `/v1/admin/revenue?orgId=${owner.organizationId}`, { token: owner.token })).status, 403);
  t.is((await api.request('GET', '/v1/admin/revenue', { token: readOnly.key })).status, 200);
  t.is((await api.request('POST', '/v1/admin/revenue', { token: admin.token })).status, 405, 'read-only view');
});
