// Provisioning circuits: GET|POST /v1/recovery/circuits, and what an open circuit does to deployment
// creation. Failures are recorded through the circuit service, as the deployment workflow's activities do
// (test/workflows/cluster-placement.test.ts drives them from real failed `pulumi up`s).
import test from 'ava';
import { createCircuitService } from '../../control-plane/recovery/circuits.ts';
import { startAdminApi, type Admin } from '../support/admin.ts';
import { createApiKey, signup, type TestApi, validDeployment } from '../support/control-plane.ts';

let api: TestApi;
let admin: Admin;
test.before(async () => { ({ api, admin } = await startAdminApi(import.meta.filename)); });
test.after.always(() => api?.close());

const circuits = createCircuitService();
/** The test cluster is a `kubernetes` one: its deployments' circuits are keyed by that provider. */
const key = (gpuType: string) => ({ provider: 'kubernetes', gpuType });
const em = () => api.orm.em.fork();
const failTimes = async (gpuType: string, times: number) => {
  for (let i = 1; i <= times; i++) await circuits.recordFailure(em(), key(gpuType), `pulumi up failed (${i})`);
};
const circuitOf = async ({ token, organizationId }: { token: string; organizationId: string }, gpuType: string) =>
  ((await api.request('GET', `/v1/recovery/circuits?orgId=${organizationId}`, { token })).body as { gpuType: string }[]).find((c) => c.gpuType === gpuType) as Record<string, unknown> | undefined;
/** Moves an open circuit's cool-down into the past. */
const coolDown = (gpuType: string) => api.pool.query(`UPDATE circuit SET half_opens_at = now() - interval '1 second' WHERE gpu_type = $1`, [gpuType]);
const deploymentCount = async (organizationId: string) => Number((await api.pool.query(`SELECT count(*) FROM deployment WHERE organization_id = $1`, [organizationId])).rows[0].count);

test.serial('five consecutive failures open the circuit: creation is 503 GPU_UNAVAILABLE naming it and when it half-opens', async (t) => {
  const { token, organizationId } = await signup(api);
  await failTimes('nvidia-l4', 4);
  t.like(await circuitOf({ token, organizationId }, 'nvidia-l4'), { provider: 'kubernetes', state: 'closed', failures: 4, openedAt: null });
  t.is((await api.request('POST', '/api/deployments', { token, body: validDeployment('before') })).status, 201, 'four failures leave it closed');

  await failTimes('nvidia-l4', 1);
  const open = await circuitOf({ token, organizationId }, 'nvidia-l4');
  t.like(open, { state: 'open', failures: 5, lastFailure: null }, 'the failure may be another organization\'s: hidden');
  t.like(await circuitOf(admin, 'nvidia-l4'), { lastFailure: 'pulumi up failed (1)' }, 'a platform administrator reads it');
  t.is(new Date(open!.halfOpensAt as string).getTime() - new Date(open!.openedAt as string).getTime(), 5 * 60_000);

  const refused = await api.request('POST', '/api/deployments', { token, body: validDeployment('refused') });
  t.is(refused.status, 503);
  t.is(refused.body.error.code, 'GPU_UNAVAILABLE');
  t.is(refused.body.error.message, `nvidia-l4 is unavailable: the kubernetes/nvidia-l4 provisioning circuit is open after 5 failed attempts; it half-opens at ${open!.halfOpensAt}`);
  t.like(refused.body.error.details, { gpu: 'nvidia-l4', circuit: { state: 'open', halfOpensAt: open!.halfOpensAt, lastFailure: null } });
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.true(retryAfter > 0 && retryAfter <= 300, String(retryAfter));
  t.is(await deploymentCount(organizationId), 1, 'nothing was created');
  // Other GPU types are not affected.
  t.is((await api.request('POST', '/api/deployments', { token, body: { ...validDeployment('t4'), gpu: 'nvidia-t4' } })).status, 201);
});

test.serial('after the cool-down the circuit is half-open: one trial; its failure reopens, its success closes', async (t) => {
  const { token, organizationId } = await signup(api);
  await failTimes('nvidia-a10g', 5);
  await coolDown('nvidia-a10g');
  t.like(await circuitOf({ token, organizationId }, 'nvidia-a10g'), { state: 'half_open' });
  t.is((await api.request('POST', '/api/deployments', { token, body: { ...validDeployment('trial'), gpu: 'nvidia-a10g' } })).status, 201, 'a half-open circuit lets a deployment through');

  t.is(await circuits.acquire(em(), key('nvidia-a10g')), undefined, 'the first attempt is the trial');
  t.like(await circuits.acquire(em(), key('nvidia-a10g')), { state: 'half_open' }, 'a second attempt is refused while the trial runs');
  const busy = await api.request('POST', '/api/deployments', { token, body: { ...validDeployment('busy'), gpu: 'nvidia-a10g' } });
  t.is(busy.status, 503);
  t.regex(busy.body.error.message, /circuit is half_open after 5 failed attempts; it is half-open and its trial attempt is under way/);

  await circuits.recordFailure(em(), key('nvidia-a10g'), 'trial failed');
  const reopened = await circuitOf({ token, organizationId }, 'nvidia-a10g');
  t.like(reopened, { state: 'open', failures: 6, trialStartedAt: null });
  t.like(await circuitOf(admin, 'nvidia-a10g'), { lastFailure: 'trial failed' });
  t.true(new Date(reopened!.halfOpensAt as string).getTime() > Date.now());

  await coolDown('nvidia-a10g');
  t.is(await circuits.acquire(em(), key('nvidia-a10g')), undefined);
  await circuits.recordSuccess(em(), key('nvidia-a10g'));
  t.like(await circuitOf({ token, organizationId }, 'nvidia-a10g'), { state: 'closed', failures: 0, openedAt: null, halfOpensAt: null, lastFailure: null });
  t.is((await api.request('POST', '/api/deployments', { token, body: { ...validDeployment('after'), gpu: 'nvidia-a10g' } })).status, 201);
});

test.serial('a success before the threshold starts the count again', async (t) => {
  const { token, organizationId } = await signup(api);
  await failTimes('nvidia-h100-80gb', 4);
  await circuits.recordSuccess(em(), key('nvidia-h100-80gb'));
  await failTimes('nvidia-h100-80gb', 4);
  t.like(await circuitOf({ token, organizationId }, 'nvidia-h100-80gb'), { state: 'closed', failures: 4 });
});

test.serial('a platform administrator\'s POST resets an open circuit; creation goes through again', async (t) => {
  const { token, organizationId } = await signup(api);
  await failTimes('nvidia-a100-80gb', 5);
  const body = { ...validDeployment('big'), gpu: 'nvidia-a100-80gb' };
  t.is((await api.request('POST', '/api/deployments', { token, body })).status, 503);
  const reset = await api.request('POST', '/v1/recovery/circuits', { token: admin.token, body: { provider: 'kubernetes', gpuType: 'nvidia-a100-80gb', action: 'reset' } });
  t.is(reset.status, 200);
  t.like(reset.body, { provider: 'kubernetes', gpuType: 'nvidia-a100-80gb', state: 'closed', failures: 0, openedAt: null, halfOpensAt: null });
  t.like(await circuitOf({ token, organizationId }, 'nvidia-a100-80gb'), { state: 'closed', failures: 0 });
  t.is((await api.request('POST', '/api/deployments', { token, body })).status, 201);
});

test.serial('bad input is 422 or 400 naming the field and changes nothing; 401 without a credential; 403 to reset for anyone but a platform administrator', async (t) => {
  const owner = await signup(api);
  await failTimes('nvidia-t4', 5);
  const before = await circuitOf(owner, 'nvidia-t4');
  const cases: [unknown, number, string][] = [
    [{ provider: 'kubernetes', gpuType: 'nvidia-t4', action: 'explode' }, 422, 'action'],
    [{ provider: 'gcp', gpuType: 'nvidia-t4', action: 'reset' }, 422, 'provider'],
    [{ provider: 'kubernetes', gpuType: 'nvidia-b200', action: 'reset' }, 422, 'gpuType'],
    [{ provider: 'kubernetes', action: 'reset' }, 400, 'gpuType'],
    [{ provider: 'kubernetes', gpuType: 'nvidia-t4', action: 'reset', force: true }, 400, ''],
  ];
  for (const [body, status, field] of cases) {
    const res = await api.request('POST', '/v1/recovery/circuits', { token: admin.token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(res.body.message.startsWith(`Invalid field ${field}`), res.body.message);
  }
  t.is((await api.request('GET', '/v1/recovery/circuits')).status, 401);
  t.is((await api.request('POST', '/v1/recovery/circuits', { body: { provider: 'kubernetes', gpuType: 'nvidia-t4', action: 'reset' } })).status, 401);
  const readOnly = await createApiKey(api, owner.token, 'read_only');
  t.is((await api.request('GET', `/v1/recovery/circuits?orgId=${owner.organizationId}`, { token: readOnly.key })).status, 200);
  const forbidden = await api.request('POST', '/v1/recovery/circuits', { token: readOnly.key, body: { provider: 'kubernetes', gpuType: 'nvidia-t4', action: 'reset' } });
  t.is(forbidden.status, 403);
  const viewer = await signup(api, 'viewer');
  await api.pool.query(`UPDATE membership SET role = 'viewer' WHERE user_id = $1`, [viewer.userId]);
  t.is((await api.request('GET', `/v1/recovery/circuits?orgId=${viewer.organizationId}`, { token: viewer.token })).status, 200);
  t.is((await api.request('POST', '/v1/recovery/circuits', { token: viewer.token, body: { provider: 'kubernetes', gpuType: 'nvidia-t4', action: 'reset' } })).status, 403);
  const deploymentsOnly = await createApiKey(api, owner.token, 'deployments_only');
  t.is((await api.request('GET', `/v1/recovery/circuits?orgId=${owner.organizationId}`, { token: deploymentsOnly.key })).status, 200);
  // A circuit is shared by every organization: not even an organization's owner closes one early.
  t.is((await api.request('POST', '/v1/recovery/circuits', { token: owner.token, body: { provider: 'kubernetes', gpuType: 'nvidia-t4', action: 'reset' } })).status, 403);
  const adminReadOnly = await createApiKey(api, admin.token, 'read_only');
  t.is((await api.request('POST', '/v1/recovery/circuits', { token: adminReadOnly.key, body: { provider: 'kubernetes', gpuType: 'nvidia-t4', action: 'reset' } })).status, 403);
  t.deepEqual(await circuitOf(owner, 'nvidia-t4'), before, 'nothing changed');
});
