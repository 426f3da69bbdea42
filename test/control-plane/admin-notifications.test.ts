// /v1/admin/notifications: announcements platform administrators publish to users.
import test from 'ava';
import { startAdminApi, type Admin } from '../support/admin.ts';
import { createApiKey, signup, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
let admin: Admin;
test.before(async () => { ({ api, admin } = await startAdminApi(import.meta.filename)); });
test.after.always(() => api?.close());

const maintenance = { title: 'Maintenance', message: 'The API is read-only from 02:00 to 03:00 UTC.', severity: 'warning' };
const storedTitles = async (...titles: string[]) => (await api.pool.query('SELECT title FROM notification WHERE title = ANY($1)', [titles])).rows.map((r) => r.title as string);
const storedRow = async (id: string) => (await api.pool.query('SELECT title, message, severity, organization_ids, starts_at, ends_at FROM notification WHERE id = $1', [id])).rows[0];

test('an administrator publishes, lists, changes and deletes a notification', async (t) => {
  const customer = await signup(api, 'customer');
  const created = await api.request('POST', '/v1/admin/notifications', {
    token: admin.token,
    body: { ...maintenance, audience: { organizationIds: [customer.organizationId] }, startsAt: '2026-12-01T02:00:00Z', endsAt: '2026-12-01T03:00:00Z' },
  });
  t.is(created.status, 201);
  t.regex(created.body.id, /^ntf_/);
  t.like(created.body, {
    ...maintenance, audience: { organizationIds: [customer.organizationId] }, startsAt: '2026-12-01T02:00:00.000Z', endsAt: '2026-12-01T03:00:00.000Z',
  });

  const everyone = await api.request('POST', '/v1/admin/notifications', { token: admin.token, body: { title: 'Welcome', message: 'New GPU types.', severity: 'info' } });
  t.is(everyone.status, 201);
  t.like(everyone.body, { audience: null, startsAt: null, endsAt: null });

  const listed = await api.request('GET', '/v1/admin/notifications', { token: admin.token });
  t.is(listed.status, 200);
  t.deepEqual(listed.body.data.filter((n: { id: string }) => [created.body.id, everyone.body.id].includes(n.id)), [everyone.body, created.body], 'newest first');

  const patched = await api.request('PATCH', `/v1/admin/notifications/${created.body.id}`, {
    token: admin.token, body: { severity: 'critical', audience: null, endsAt: '2026-12-01T04:00:00Z' },
  });
  t.is(patched.status, 200);
  t.like(patched.body, { title: 'Maintenance', severity: 'critical', audience: null, startsAt: '2026-12-01T02:00:00.000Z', endsAt: '2026-12-01T04:00:00.000Z' });
  t.like(await storedRow(created.body.id), { severity: 'critical', organization_ids: null });

  const deleted = await api.request('DELETE', `/v1/admin/notifications/${created.body.id}`, { token: admin.token });
  t.deepEqual({ status: deleted.status, body: deleted.body }, { status: 200, body: { id: created.body.id, deleted: true } });
  t.is((await api.request('PATCH', `/v1/admin/notifications/${created.body.id}`, { token: admin.token, body: { title: 'x' } })).status, 404);
  t.is((await api.request('DELETE', `/v1/admin/notifications/${created.body.id}`, { token: admin.token })).status, 404);
  t.is((await api.request('DELETE', '/v1/admin/notifications/ntf_unknown', { token: admin.token })).status, 404);
  t.is(await storedRow(created.body.id), undefined);
});

test('the list pages newest first with a cursor', async (t) => {
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push((await api.request('POST', '/v1/admin/notifications', { token: admin.token, body: { ...maintenance, title: `page-${i}` } })).body.id);
  }
  const seen: { id: string; title: string }[] = [];
  let cursor: string | null = null;
  do {
    const res = await api.request('GET', `/v1/admin/notifications?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: admin.token });
    t.is(res.status, 200);
    t.true(res.body.data.length <= 2);
    seen.push(...res.body.data);
    cursor = res.body.pagination.nextCursor;
  } while (cursor);
  t.is(new Set(seen.map((n) => n.id)).size, seen.length, 'no notification twice');
  const mine = seen.filter((n) => n.title.startsWith('page-')).map((n) => n.id);
  t.deepEqual(mine, [...ids].reverse());
  t.is((await api.request('GET', '/v1/admin/notifications?cursor=forged', { token: admin.token })).status, 400);
  t.is((await api.request('GET', '/v1/admin/notifications?limit=0', { token: admin.token })).status, 400);
});

test('bad notifications are 400 (wrong type, missing or unknown field) or 422 (broken rule) naming the field, and store nothing', async (t) => {
  for (const [body, status, field] of [
    [{ ...maintenance, title: 'bad-window', startsAt: '2026-12-01T03:00:00Z', endsAt: '2026-12-01T02:00:00Z' }, 422, 'endsAt'],
    [{ ...maintenance, title: 'bad-severity', severity: 'fatal' }, 422, 'severity'],
    [{ ...maintenance, title: 'bad-date', startsAt: 'tomorrow' }, 422, 'startsAt'],
    [{ ...maintenance, title: 'bad-org', audience: { organizationIds: ['org_doesnotexist0000000'] } }, 422, 'audience.organizationIds.0'],
    [{ ...maintenance, title: 'empty-audience', audience: { organizationIds: [] } }, 422, 'audience.organizationIds'],
    [{ ...maintenance, title: '' }, 422, 'title'],
    [{ ...maintenance, title: 'typed', message: 42 }, 400, 'message'],
    [{ title: 'no-message', severity: 'info' }, 400, 'message'],
    [{ ...maintenance, title: 'extra', colour: 'red' }, 400, 'body'],
  ] as const) {
    const res = await api.request('POST', '/v1/admin/notifications', { token: admin.token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(res.body.message.startsWith(`Invalid field ${field}:`), `${JSON.stringify(body)}: ${res.body.message}`);
  }
  t.deepEqual(await storedTitles('bad-window', 'bad-severity', 'bad-date', 'bad-org', 'empty-audience', '', 'typed', 'no-message', 'extra'), []);

  const created = await api.request('POST', '/v1/admin/notifications', {
    token: admin.token, body: { ...maintenance, title: 'windowed', startsAt: '2026-12-01T02:00:00Z', endsAt: '2026-12-01T03:00:00Z' },
  });
  const before = await storedRow(created.body.id);
  for (const [body, status, field] of [
    [{ endsAt: '2026-12-01T01:00:00Z' }, 422, 'endsAt'],
    [{ startsAt: '2026-12-01T05:00:00Z' }, 422, 'startsAt'],
    [{ title: 'changed', severity: 'fatal' }, 422, 'severity'],
    [{ audience: { organizationIds: ['org_doesnotexist0000000'] } }, 422, 'audience.organizationIds.0'],
    [{ title: 42 }, 400, 'title'],
  ] as const) {
    const res = await api.request('PATCH', `/v1/admin/notifications/${created.body.id}`, { token: admin.token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(res.body.message.startsWith(`Invalid field ${field}:`), `${JSON.stringify(body)}: ${res.body.message}`);
  }
  t.deepEqual(await storedRow(created.body.id), before, 'nothing changed');
  const cleared = await api.request('PATCH', `/v1/admin/notifications/${created.body.id}`, { token: admin.token, body: { endsAt: null, startsAt: '2026-12-01T05:00:00Z' } });
  t.is(cleared.status, 200, 'without endsAt any start is fine');
  t.like(cleared.body, { startsAt: '2026-12-01T05:00:00.000Z', endsAt: null });
});

test('only platform administrators: no credential 401, an organization owner 403, an admin\'s read-only key reads but cannot write', async (t) => {
  const owner = await signup(api, 'owner');
  const created = await api.request('POST', '/v1/admin/notifications', { token: admin.token, body: { ...maintenance, title: 'guarded' } });
  const readOnly = await createApiKey(api, admin.token, 'read_only');
  const calls = [
    ['GET', '/v1/admin/notifications', undefined],
    ['POST', '/v1/admin/notifications', { ...maintenance, title: 'sneaky' }],
    ['PATCH', `/v1/admin/notifications/${created.body.id}`, { title: 'sneaky' }],
    ['DELETE', `/v1/admin/notifications/${created.body.id}`, undefined],
  ] as const;
  for (const [method, path, body] of calls) {
    t.is((await api.request(method, path, { body })).status, 401, `${method} ${path} without credential`);
    t.is((await api.request(method, path, { token: owner.token, body })).status, 403, `${method} ${path} as an organization owner`);
    t.is((await api.request(method, path, { token: readOnly.key, body })).status, method === 'GET' ? 200 : 403, `${method} ${path} with a read-only key`);
  }
  t.deepEqual(await storedTitles('sneaky'), []);
  t.like(await storedRow(created.body.id), { title: 'guarded' });
});
