import test from 'ava';
import { createApiKey, desiredStatesSent, signup, startTestApi, type TestApi, validDeployment } from '../support/control-plane.ts';

let api: TestApi;
test.before(async () => { api = await startTestApi(import.meta.filename); });
test.after.always(() => api?.close());

async function deployment(name = 'actor', body: Record<string, unknown> = {}) {
  const owner = await signup(api);
  const res = await api.request('POST', '/v1/deployments', { token: owner.token, body: { ...validDeployment(name), maxReplicas: 4, ...body } });
  return { ...owner, id: res.body.id as string };
}

const act = (id: string, token: string | undefined, body: unknown) => api.request('POST', `/v1/deployments/${id}/actions`, { token, body });

test('stop, start, restart and scale answer at once and send each new desired state to the workflow', async (t) => {
  const { token, id } = await deployment();
  const stopped = await act(id, token, { action: 'stop' });
  t.is(stopped.status, 200);
  t.like(stopped.body, { id, replicas: 1 });
  t.is((await act(id, token, { action: 'start' })).status, 200);
  t.is((await act(id, token, { action: 'restart' })).status, 200);
  const scaled = await act(id, token, { action: 'scale', replicas: 3 });
  t.like(scaled.body, { id, replicas: 3, maxReplicas: 4 });

  const sent = await desiredStatesSent(api, id);
  t.deepEqual(sent.map(({ generation, running, restarts, replicas }) => ({ generation, running, restarts, replicas })), [
    { generation: 1, running: true, restarts: 0, replicas: 1 },
    { generation: 2, running: false, restarts: 0, replicas: 1 },
    { generation: 3, running: true, restarts: 0, replicas: 1 },
    { generation: 4, running: true, restarts: 1, replicas: 1 },
    { generation: 5, running: true, restarts: 1, replicas: 3 },
  ]);
});

test('bad actions are 400 naming the field, past the platform\'s limit 422, and nothing is sent', async (t) => {
  const { token, id } = await deployment();
  const unknown = await act(id, token, { action: 'explode' });
  t.is(unknown.status, 400);
  t.is(unknown.body.code, 'INVALID_REQUEST');
  t.is((await act(id, token, { action: 'scale' })).status, 400);
  t.is((await act(id, token, { action: 'scale', replicas: 'many' })).status, 400);
  const beyond = await act(id, token, { action: 'scale', replicas: 101 });
  t.is(beyond.status, 422);
  t.regex(beyond.body.message, /replicas/);
  t.is((await desiredStatesSent(api, id)).length, 1, 'only the creation reached the workflow');
});

test('a scale outside the bounds runs the count asked for and moves the bound, and the answer says so', async (t) => {
  // As the docs' walk-through creates it: no bounds given, so minReplicas = maxReplicas = 1.
  const owner = await signup(api);
  const created = await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('walk') });
  const id = created.body.id as string;
  const up = await act(id, owner.token, { action: 'scale', replicas: 3 });
  t.is(up.status, 200, JSON.stringify(up.body));
  t.like(up.body, { replicas: 3, minReplicas: 1, maxReplicas: 3 });
  t.deepEqual(up.body.notices, ['maxReplicas raised from 1 to 3 to run 3 replicas; the autoscaler may now use up to 3.']);
  const zero = await act(id, owner.token, { action: 'scale', replicas: 0 });
  t.like(zero.body, { replicas: 0, minReplicas: 0, maxReplicas: 3 });
  t.deepEqual(zero.body.notices, ['minReplicas lowered from 1 to 0 to run 0 replicas.']);
  const within = await act(id, owner.token, { action: 'scale', replicas: 2 });
  t.like(within.body, { replicas: 2, minReplicas: 0, maxReplicas: 3, notices: [] });
  t.deepEqual((await desiredStatesSent(api, id)).map((d) => [d.replicas, d.minReplicas, d.maxReplicas]), [[1, 1, 1], [3, 1, 3], [0, 0, 3], [2, 0, 3]]);
});

test('no credential is 401, a read-only key is 403, another organization\'s deployment is 404', async (t) => {
  const { token, id } = await deployment();
  const none = await act(id, undefined, { action: 'stop' });
  t.is(none.status, 401);
  t.is(none.body.code, 'INVALID_API_KEY');
  const readOnly = await createApiKey(api, token, 'read_only');
  const refused = await act(id, readOnly.key, { action: 'stop' });
  t.is(refused.status, 403);
  t.is(refused.body.code, 'INSUFFICIENT_PERMISSIONS');
  const deploymentsOnly = await createApiKey(api, token, 'deployments_only');
  t.is((await act(id, deploymentsOnly.key, { action: 'restart' })).status, 200);
  const other = await signup(api, 'other');
  const hidden = await act(id, other.token, { action: 'stop' });
  t.is(hidden.status, 404);
  t.is(hidden.body.code, 'DEPLOYMENT_NOT_FOUND');
});

test('a deployment being deleted refuses actions with 409', async (t) => {
  const { token, id } = await deployment();
  await api.request('DELETE', `/api/deployments/${id}`, { token });
  t.is((await act(id, token, { action: 'start' })).status, 409);
});

test('concurrent changes each get their own generation; the newest desired state sent carries all of them', async (t) => {
  const { token, id } = await deployment('racing');
  const answers = await Promise.all([
    act(id, token, { action: 'stop' }),
    act(id, token, { action: 'scale', replicas: 3 }),
    act(id, token, { action: 'restart' }),
    api.request('DELETE', `/api/deployments/${id}`, { token }),
  ]);
  t.true(answers.every((a) => a.status === 200 || a.status === 409), JSON.stringify(answers.map((a) => a.status)));
  const succeeded = answers.filter((a) => a.status === 200).length;
  const row = (await api.pool.query('SELECT generation, sent_generation, delete_requested FROM deployment WHERE id = $1', [id])).rows[0];
  t.is(row.generation, 1 + succeeded, 'no two changes share a generation');
  t.true(row.delete_requested);
  const sent = await desiredStatesSent(api, id);
  const generations = sent.map((d) => d.generation);
  t.is(new Set(generations).size, generations.length, 'each generation sent once');
  const newest = sent.reduce((a, b) => (b.generation > a.generation ? b : a));
  t.is(newest.generation, row.generation);
  t.true(newest.deleted, 'the delete is in the newest desired state, not lost as an old message');
  t.is(row.sent_generation, row.generation);
});
