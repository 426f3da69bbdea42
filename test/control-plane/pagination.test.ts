// Deployment lists: keyset cursor pages, tamper-evident cursors, filters, multi-field sort, bad params.
import test from 'ava';
import { signup, startTestApi, type TestApi } from '../support/control-plane.ts';

let api: TestApi;
let token: string;
let organizationId: string;
const STATUSES = ['pending', 'running', 'deploying', 'failed', 'stopped'];

test.before(async () => {
  api = await startTestApi(import.meta.filename);
  const user = await signup(api);
  token = user.token;
  organizationId = user.organizationId;
  // 45 deployments, one a day from 2026-01-01, statuses in rotation; two share a timestamp (tie-break on id).
  await api.pool.query(`
    INSERT INTO deployment (id, created_at, updated_at, organization_id, name, model, runtime, gpu, status, endpoint, replicas, min_replicas, max_replicas, current_replicas)
    SELECT 'dep_' || lpad(i::text, 20, '0'), timestamptz '2026-01-01' + make_interval(days => least(i, 44) - 1), now(), $1,
           'd-' || lpad(i::text, 2, '0'), 'a/b', 'vllm', CASE WHEN i % 2 = 0 THEN 'nvidia-l4' ELSE 'nvidia-t4' END,
           ($2::text[])[1 + i % 5], 'https://x', 1, 1, 1, 0
    FROM generate_series(1, 45) AS i`, [user.organizationId, STATUSES]);
});
test.after.always(() => api?.close());

async function all(query: string) {
  const names: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = query ? '&' : '';
    const res = await api.request('GET', `/api/deployments?${query}${sep}limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    names.push(...res.body.data.map((d: { name: string }) => d.name));
    cursor = res.body.pagination.nextCursor;
    if (res.body.pagination.hasMore !== (cursor !== null)) throw new Error('hasMore and nextCursor disagree');
    pages += 1;
  } while (cursor);
  return { names, pages };
}

test('default: 20 per page, newest first, pages walk every deployment exactly once', async (t) => {
  const first = await api.request('GET', '/api/deployments', { token });
  t.is(first.body.data.length, 20);
  t.true(first.body.pagination.hasMore);
  const { names, pages } = await all('');
  t.is(pages, 3);
  t.is(names.length, 45);
  t.is(new Set(names).size, 45);
  // d-44 and d-45 share the newest timestamp; the id breaks the tie the same way every time.
  t.deepEqual(names.slice(0, 3), ['d-45', 'd-44', 'd-43']);
  t.is(names.at(-1), 'd-01');
});

test('limit is honoured up to 100', async (t) => {
  const res = await api.request('GET', '/api/deployments?limit=100', { token });
  t.is(res.body.data.length, 45);
  t.false(res.body.pagination.hasMore);
  t.is(res.body.pagination.nextCursor, null);
  t.is((await api.request('GET', `/v1/deployments?orgId=${organizationId}&limit=7`, { token })).body.data.length, 7);
});

test('sort by several fields, ascending and descending', async (t) => {
  const { names } = await all('sort=gpu,-name');
  const expected = Array.from({ length: 45 }, (_, i) => i + 1)
    .map((i) => ({ name: `d-${String(i).padStart(2, '0')}`, gpu: i % 2 === 0 ? 'nvidia-l4' : 'nvidia-t4' }))
    .sort((a, b) => a.gpu.localeCompare(b.gpu) || b.name.localeCompare(a.name))
    .map((d) => d.name);
  t.deepEqual(names, expected);
  t.deepEqual((await all('sort=created_at')).names.slice(0, 2), ['d-01', 'd-02']);
});

test('status filter takes a comma list', async (t) => {
  const { names } = await all('status=running,failed');
  t.is(names.length, 18);
  const res = await api.request('GET', '/api/deployments?status=running&limit=100', { token });
  t.true(res.body.data.every((d: { status: string }) => d.status === 'running'));
});

test('created_after is inclusive, created_before exclusive, by UTC day', async (t) => {
  const { names } = await all('created_after=2026-01-10&created_before=2026-01-15&sort=created_at');
  t.deepEqual(names, ['d-10', 'd-11', 'd-12', 'd-13', 'd-14']);
});

test('a tampered or foreign cursor is 400 naming cursor', async (t) => {
  const first = await api.request('GET', '/api/deployments?limit=5', { token });
  const cursor: string = first.body.pagination.nextCursor;
  const [payload, mac] = cursor.split('.');
  const edited = Buffer.from(JSON.stringify(['-created_at', 'WyIyMDI1LTAxLTAxIl0'])).toString('base64url');
  for (const bad of [`${edited}.${mac}`, `${payload}.AAAA${mac!.slice(4)}`, 'garbage', `${payload}`]) {
    const res = await api.request('GET', `/api/deployments?cursor=${encodeURIComponent(bad)}`, { token });
    t.is(res.status, 400, bad);
    t.is(res.body.error.code, 'INVALID_REQUEST');
    t.regex(res.body.error.message, /cursor/);
  }
  const otherSort = await api.request('GET', `/api/deployments?sort=name&cursor=${encodeURIComponent(cursor)}`, { token });
  t.is(otherSort.status, 400);
  t.regex(otherSort.body.error.message, /cursor/);
});

test('malformed parameters are 400 naming the parameter, on both surfaces', async (t) => {
  const cases: Array<[string, string]> = [
    ['limit=0', 'limit'], ['limit=101', 'limit'], ['limit=ten', 'limit'], ['limit=1&limit=2', 'limit'],
    ['status=sleeping', 'status'], ['created_after=2026-13-01', 'created_after'], ['created_before=yesterday', 'created_before'],
    ['sort=password_hash', 'sort'], ['sort=name,name', 'sort'], ['sort=', 'sort'],
  ];
  for (const [query, parameter] of cases) {
    const res = await api.request('GET', `/api/deployments?${query}`, { token });
    t.is(res.status, 400, query);
    t.regex(res.body.error.message, new RegExp(parameter), query);
    const reference = await api.request('GET', `/v1/deployments?orgId=${organizationId}&${query}`, { token });
    t.is(reference.status, 400, query);
    t.is(reference.body.code, 'INVALID_REQUEST');
    t.regex(reference.body.message, new RegExp(`Invalid query parameter ${parameter}:`), query);
  }
});

test('another organization sees none of these deployments', async (t) => {
  const other = await signup(api, 'other');
  const res = await api.request('GET', '/api/deployments?limit=100', { token: other.token });
  t.deepEqual(res.body.data, []);
});

test('rows within one millisecond page without skips or repeats', async (t) => {
  const user = await signup(api, 'micro');
  // Written outside the API with microsecond timestamps: the column keeps what a cursor can hold.
  await api.pool.query(`
    INSERT INTO deployment (id, created_at, updated_at, organization_id, name, model, runtime, gpu, status, endpoint, replicas, min_replicas, max_replicas, current_replicas)
    SELECT 'dep_micro' || lpad(i::text, 11, '0'), timestamptz '2026-03-01 00:00:00.123+00' + make_interval(secs => i / 1000000.0), now(), $1,
           'm-' || lpad(i::text, 2, '0'), 'a/b', 'vllm', 'nvidia-l4', 'pending', 'https://x', 1, 1, 1, 0
    FROM generate_series(1, 30) AS i`, [user.organizationId]);
  const names: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await api.request('GET', `/api/deployments?sort=created_at&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: user.token });
    names.push(...res.body.data.map((d: { name: string }) => d.name));
    cursor = res.body.pagination.nextCursor;
  } while (cursor && names.length < 100);
  t.is(names.length, 30);
  t.is(new Set(names).size, 30);
});
