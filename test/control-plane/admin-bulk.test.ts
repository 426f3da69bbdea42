// POST /v1/admin/deployments/bulk: stop, start or delete deployments of any organization through their
// workflows (the same deployment service as the organizations' own calls), with a result per id.
import test from 'ava';
import { startAdminApi, type Admin } from '../support/admin.ts';
import { createApiKey, desiredStatesSent, signup, validDeployment, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
let admin: Admin;
test.before(async () => { ({ api, admin } = await startAdminApi(import.meta.filename)); });
test.after.always(() => api?.close());

async function deploy(token: string, name: string) {
  const res = await api.request('POST', '/v1/deployments', { token, body: validDeployment(name) });
  if (res.status !== 201) throw new Error(`deploy failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}
const generations = async (ids: string[]) => (await api.pool.query('SELECT id, generation, running, delete_requested FROM deployment WHERE id = ANY($1) ORDER BY id', [ids])).rows;
const bulk = (body: unknown, token = admin.token) => api.request('POST', '/v1/admin/deployments/bulk', { token, body });

test('stop, start and delete deployments of several organizations; unknown ids are not_found; each workflow is sent its desired state', async (t) => {
  const a = await signup(api, 'bulk-a');
  const b = await signup(api, 'bulk-b');
  const [a1, a2, b1] = [await deploy(a.token, 'a-one'), await deploy(a.token, 'a-two'), await deploy(b.token, 'b-one')];

  const stopped = await bulk({ action: 'stop', ids: [a1, b1, 'dep_doesnotexist00000000'] });
  t.is(stopped.status, 200);
  t.deepEqual(stopped.body, {
    action: 'stop',
    results: [{ id: a1, result: 'ok', status: 'pending' }, { id: b1, result: 'ok', status: 'pending' }, { id: 'dep_doesnotexist00000000', result: 'not_found' }],
    summary: { ok: 2, notFound: 1, error: 0 },
  });
  for (const id of [a1, b1]) t.like((await desiredStatesSent(api, id)).at(-1), { generation: 2, running: false });
  t.is((await desiredStatesSent(api, a2)).length, 1, 'a deployment not named is not touched');

  const started = await bulk({ action: 'start', ids: [b1] });
  t.deepEqual(started.body.results, [{ id: b1, result: 'ok', status: 'pending' }]);
  t.like((await desiredStatesSent(api, b1)).at(-1), { generation: 3, running: true });

  const deleted = await bulk({ action: 'delete', ids: [a1, a2] });
  t.deepEqual(deleted.body.results, [{ id: a1, result: 'ok', status: 'deleting' }, { id: a2, result: 'ok', status: 'deleting' }]);
  t.like((await desiredStatesSent(api, a2)).at(-1), { deleted: true });
  // The organization sees what the administrator did, as if it had done it.
  t.like((await api.request('GET', `/api/deployments/${a2}`, { token: a.token })).body.data, { status: 'deleting' });

  // A deployment being deleted cannot be stopped; one already gone is not found.
  await api.pool.query('UPDATE deployment SET deleted_at = now(), status = \'deleted\' WHERE id = $1', [a2]);
  const refused = await bulk({ action: 'stop', ids: [a1, a2] });
  t.is(refused.status, 200);
  t.like(refused.body.results[0], { id: a1, result: 'error', error: { code: 'RESOURCE_EXISTS' } });
  t.regex(refused.body.results[0].error.message, /being deleted/);
  t.deepEqual(refused.body.results[1], { id: a2, result: 'not_found' });
  t.deepEqual(refused.body.summary, { ok: 0, notFound: 1, error: 1 });
});

test('bad requests are 400 (wrong type, missing or unknown field) or 422 (unknown action, empty, over 100, repeated ids) and change nothing', async (t) => {
  const owner = await signup(api, 'bulk-bad');
  const id = await deploy(owner.token, 'untouched');
  const before = await generations([id]);
  const many = Array.from({ length: 101 }, (_, i) => `dep_${String(i).padStart(20, '0')}`);
  for (const [body, status, field] of [
    [{ action: 'explode', ids: [id] }, 422, 'action'],
    [{ action: 'restart', ids: [id] }, 422, 'action'],
    [{ action: 'stop', ids: [] }, 422, 'ids'],
    [{ action: 'stop', ids: [id, ...many] }, 422, 'ids'],
    [{ action: 'stop', ids: [id, id] }, 422, 'ids'],
    [{ action: 'stop', ids: id }, 400, 'ids'],
    [{ action: 'stop', ids: [42] }, 400, 'ids.0'],
    [{ ids: [id] }, 400, 'action'],
    [{ action: 'stop', ids: [id], force: true }, 400, 'body'],
  ] as const) {
    const res = await bulk(body);
    t.is(res.status, status, JSON.stringify(body).slice(0, 80));
    t.true(res.body.message.includes(field), res.body.message);
  }
  t.is((await api.request('POST', '/v1/admin/deployments/bulk', { token: admin.token, body: '{"action":' })).status, 400);
  t.deepEqual(await generations([id]), before);
  t.is((await desiredStatesSent(api, id)).length, 1);
});

test('an organization owner, even on the own deployments, and an admin\'s read-only or deployments-only key are refused (403); nothing changes', async (t) => {
  const owner = await signup(api, 'bulk-owner');
  const id = await deploy(owner.token, 'mine');
  const before = await generations([id]);
  t.is((await bulk({ action: 'stop', ids: [id] }, owner.token)).status, 403);
  t.is((await bulk({ action: 'stop', ids: [id] }, (await createApiKey(api, admin.token, 'read_only')).key)).status, 403);
  t.is((await bulk({ action: 'stop', ids: [id] }, (await createApiKey(api, admin.token, 'deployments_only')).key)).status, 403);
  t.is((await api.request('POST', '/v1/admin/deployments/bulk', { body: { action: 'stop', ids: [id] } })).status, 401);
  t.deepEqual(await generations([id]), before);
  t.is((await bulk({ action: 'stop', ids: [id] }, (await createApiKey(api, admin.token, 'full_access')).key)).body.results[0].result, 'ok', 'an admin\'s full-access key may');
});
