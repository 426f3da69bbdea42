// The enterprise audit trail (list, streamed export) and usage analytics: filters, pagination, formats,
// roles and scopes, and organizations kept apart.
import { randomUUID } from 'node:crypto';
import test from 'ava';
import { exportStream } from '../../control-plane/audit/export.ts';
import { createApiKey, signup, startTestApi, type TestApi, validDeployment } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';

let api: TestApi;
test.before(async () => {
  api = await startTestApi(import.meta.filename);
});
test.after.always(() => api?.close());

const AUDIT = '/v1/enterprise/audit';
const EXPORT = '/v1/enterprise/audit/export';
const ANALYTICS = '/v1/enterprise/analytics';

interface Seed {
  userId: string;
  apiKeyId?: string | null;
  action?: string;
  resourceType?: string;
  resourceId?: string | null;
  createdAt: string;
  statusCode?: number;
}

/** Writes audit records as the audit trail would, with chosen times and values. */
async function seed(organizationId: string, records: Seed[]): Promise<string[]> {
  const ids: string[] = [];
  for (const r of records) {
    const id = `aud_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
    ids.push(id);
    await api.pool.query(
      `INSERT INTO audit_log (id, created_at, organization_id, user_id, api_key_id, action, resource_type, resource_id, ip_address, status_code)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '203.0.113.7', $9)`,
      [id, r.createdAt, organizationId, r.userId, r.apiKeyId ?? null, r.action ?? 'listDeploymentsV1', r.resourceType ?? 'deployment', r.resourceId ?? null, r.statusCode ?? 200],
    );
  }
  return ids;
}

/**
 * Seeds `count` records one second apart with generate_series, the i-th `i` seconds before `last`; answers
 * the i-th record's id.
 */
async function seedMany(organizationId: string, userId: string, count: number, last = '2026-06-01T00:00:00.000Z') {
  const tag = randomUUID().slice(0, 8);
  await api.pool.query(
    `INSERT INTO audit_log (id, created_at, organization_id, user_id, api_key_id, action, resource_type, resource_id, ip_address, status_code)
     SELECT 'aud_' || $5 || lpad(i::text, 12, '0'), $3::timestamptz - make_interval(secs => i), $1, $2, NULL, 'listDeploymentsV1', 'deployment', NULL, '203.0.113.7', 200
     FROM generate_series(0, $4::int - 1) AS i`,
    [organizationId, userId, last, count, tag],
  );
  return (i: number) => `aud_${tag}${String(i).padStart(12, '0')}`;
}

/** A member of `organizationId` with the given role (as the team routes would add one), with a session. */
async function member(organizationId: string, role: 'owner' | 'admin' | 'member' | 'viewer') {
  const user = await signup(api, role);
  await api.pool.query(`INSERT INTO membership (id, created_at, organization_id, user_id, role) VALUES ($1, now(), $2, $3, $4)`,
    [`mem_${randomUUID().replaceAll('-', '').slice(0, 20)}`, organizationId, user.userId, role]);
  return user;
}

/** The raw answer (CSV and JSON Lines are not JSON). */
async function download(path: string, token?: string) {
  const response = await fetch(api.url + path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function parseCsv(text: string): string[][] {
  // The fields written here hold no quotes or newlines except where a test checks quoting itself.
  return text.trimEnd().split('\n').map((line) => line.split(','));
}

test('the list answers the organization\'s records newest first, with every field, from real requests', async (t) => {
  const owner = await signup(api, 'owner');
  const key = await createApiKey(api, owner.token, 'full_access');
  const created = await api.request('POST', '/v1/deployments', { token: key.key, body: validDeployment() });
  t.is(created.status, 201);
  t.is((await api.request('GET', `/v1/deployments?orgId=${owner.organizationId}`, { token: key.key })).status, 200);

  // A read made with a key is audited in the next batch, shortly after its answer.
  const res = await eventually('the read\'s audit record', async () => {
    const answer = await api.request('GET', `${AUDIT}?orgId=${owner.organizationId}`, { token: owner.token });
    return answer.body.data?.length === 3 && answer;
  });
  t.is(res.status, 200);
  t.deepEqual(res.body.data.map((r: { action: string }) => r.action), ['listDeploymentsV1', 'createDeploymentV1', 'createApiKey']);
  const [, create, keyCreation] = res.body.data;
  t.deepEqual(Object.keys(create).sort(), ['action', 'api_key_id', 'created_at', 'id', 'ip_address', 'resource_id', 'resource_type', 'status_code', 'user_id']);
  t.like(create, { user_id: owner.userId, api_key_id: key.id, resource_type: 'deployment', resource_id: created.body.id, status_code: 201 });
  t.regex(create.id, /^aud_/);
  t.truthy(Date.parse(create.created_at));
  t.like(keyCreation, { user_id: owner.userId, api_key_id: null, status_code: 201 });
  t.deepEqual(res.body.pagination, { hasMore: false, nextCursor: null });
});

test('filters: user, API key, action, resource type and id, and time (from inclusive, to exclusive)', async (t) => {
  const owner = await signup(api, 'owner');
  const other = 'usr_someoneelse0000000';
  const ids = await seed(owner.organizationId, [
    { userId: owner.userId, apiKeyId: 'key_a', action: 'createDeploymentV1', resourceId: 'dep_one', createdAt: '2026-03-01T10:00:00Z' },
    { userId: owner.userId, apiKeyId: 'key_b', action: 'listDeploymentsV1', createdAt: '2026-03-02T10:00:00Z' },
    { userId: other, action: 'deleteDeployment', resourceId: 'dep_two', createdAt: '2026-03-03T10:00:00Z' },
    { userId: other, action: 'createWebhook', resourceType: 'webhook', resourceId: 'whs_one', createdAt: '2026-03-04T10:00:00Z' },
  ]);
  const found = async (query: string) => {
    const res = await api.request('GET', `${AUDIT}?orgId=${owner.organizationId}&${query}`, { token: owner.token });
    t.is(res.status, 200, query);
    return res.body.data.map((r: { id: string }) => ids.indexOf(r.id));
  };
  t.deepEqual(await found(`userId=${owner.userId}&to=2026-04-01T00:00:00Z`), [1, 0]);
  t.deepEqual(await found(`userId=${other}`), [3, 2]);
  t.deepEqual(await found('apiKeyId=key_a'), [0]);
  t.deepEqual(await found('action=deleteDeployment'), [2]);
  t.deepEqual(await found('resourceType=webhook'), [3]);
  t.deepEqual(await found('resourceType=deployment&resourceId=dep_two'), [2]);
  t.deepEqual(await found('from=2026-03-02T10:00:00Z&to=2026-03-04T10:00:00Z'), [2, 1]);
  t.deepEqual(await found('from=2026-03-02T11:00:00%2B01:00&to=2026-03-03T10:00:00.001Z'), [2, 1]);
  t.deepEqual(await found(`userId=${other}&resourceType=deployment&from=2026-03-01T00:00:00Z&to=2026-03-31T00:00:00Z`), [2]);
  t.deepEqual(await found('userId=usr_nobody'), []);
  t.deepEqual(await found(`action=${encodeURIComponent("it's? -- \\")}`), []);
});

test('cursor pages walk every record exactly once, in both orders, including records sharing a millisecond', async (t) => {
  const owner = await signup(api, 'owner');
  await seedMany(owner.organizationId, owner.userId, 45);
  // Five records written in the same millisecond (as one batched write would).
  const same = await seed(owner.organizationId, Array.from({ length: 5 }, () => ({ userId: owner.userId, createdAt: '2026-05-31T23:59:40.000Z' })));
  for (const sort of ['-created_at', 'created_at']) {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: Awaited<ReturnType<TestApi['request']>> = await api.request('GET', `${AUDIT}?orgId=${owner.organizationId}&limit=7&sort=${sort}&to=2027-01-01T00:00:00Z${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: owner.token });
      t.is(res.status, 200);
      t.true(res.body.data.length <= 7);
      seen.push(...res.body.data.map((r: { id: string }) => r.id));
      cursor = res.body.pagination.nextCursor;
      t.is(res.body.pagination.hasMore, cursor !== null);
      pages += 1;
    } while (cursor);
    t.is(pages, 8, sort);
    t.is(seen.length, 50, sort);
    t.is(new Set(seen).size, 50, sort);
    for (const id of same) t.true(seen.includes(id));
    const { rows } = await api.pool.query(
      `SELECT id FROM audit_log WHERE organization_id = $1 ORDER BY created_at ${sort.startsWith('-') ? 'DESC' : 'ASC'}, id ${sort.startsWith('-') ? 'DESC' : 'ASC'}`, [owner.organizationId]);
    t.deepEqual(seen, rows.map((r: { id: string }) => r.id).filter((id: string) => seen.includes(id)), sort);
  }
  const page = await api.request('GET', `${AUDIT}?orgId=${owner.organizationId}`, { token: owner.token });
  t.is(page.body.data.length, 20);
  t.true(page.body.pagination.hasMore);
});

test('a tampered cursor, or one issued for another order or another list, is 400 naming cursor', async (t) => {
  const owner = await signup(api, 'owner');
  await seedMany(owner.organizationId, owner.userId, 5);
  const first = await api.request('GET', `${AUDIT}?orgId=${owner.organizationId}&limit=2`, { token: owner.token });
  const cursor: string = first.body.pagination.nextCursor;
  const deploymentsCursor = await (async () => {
    for (const name of ['a-one', 'a-two']) await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment(name) });
    return (await api.request('GET', `/v1/deployments?orgId=${owner.organizationId}&limit=1`, { token: owner.token })).body.pagination.nextCursor as string;
  })();
  const tampered = `${cursor.slice(0, -2)}${cursor.endsWith('A') ? 'B' : 'A'}`;
  for (const [query, what] of [[`cursor=${tampered}`, 'tampered'], [`cursor=${cursor}&sort=created_at`, 'other order'], [`cursor=${deploymentsCursor}`, 'deployments cursor'], ['cursor=nonsense', 'garbage']]) {
    const res = await api.request('GET', `${AUDIT}?orgId=${owner.organizationId}&${query}`, { token: owner.token });
    t.is(res.status, 400, what);
    t.is(res.body.code, 'INVALID_REQUEST');
    t.regex(res.body.message, /cursor/, what);
  }
  t.is((await api.request('GET', `${AUDIT}?orgId=${owner.organizationId}&limit=2&cursor=${encodeURIComponent(cursor)}`, { token: owner.token })).status, 200);
});

test('malformed parameters are 400 naming the parameter, on every route', async (t) => {
  const owner = await signup(api, 'owner');
  const cases: Array<[string, string]> = [
    [`${AUDIT}?orgId=${owner.organizationId}&limit=0`, 'limit'], [`${AUDIT}?orgId=${owner.organizationId}&limit=101`, 'limit'], [`${AUDIT}?orgId=${owner.organizationId}&limit=ten`, 'limit'],
    [`${AUDIT}?orgId=${owner.organizationId}&from=yesterday`, 'from'], [`${AUDIT}?orgId=${owner.organizationId}&to=2026-13-01T00:00:00Z`, 'to'], [`${AUDIT}?orgId=${owner.organizationId}&from=2026-03-01`, 'from'],
    [`${AUDIT}?orgId=${owner.organizationId}&from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z`, 'to'], [`${AUDIT}?orgId=${owner.organizationId}&sort=action`, 'sort'],
    [`${AUDIT}?orgId=${owner.organizationId}&userId=${'u'.repeat(65)}`, 'userId'], [`${AUDIT}?orgId=${owner.organizationId}&apiKeyId=`, 'apiKeyId'], [`${AUDIT}?orgId=${owner.organizationId}&action=`, 'action'],
    [AUDIT, 'orgId'], [EXPORT, 'orgId'], [`${AUDIT}?orgId=`, 'orgId'], [`${EXPORT}?format=csv&orgId=`, 'orgId'],
    [`${EXPORT}?orgId=${owner.organizationId}&format=xml`, 'format'], [`${EXPORT}?orgId=${owner.organizationId}&format=csv&from=soon`, 'from'], [`${EXPORT}?orgId=${owner.organizationId}&resourceId=`, 'resourceId'],
    [`${ANALYTICS}?from=2026-03-02T00:00:00Z&to=2026-03-02T00:00:00Z`, 'to'], [`${ANALYTICS}?limit=0`, 'limit'], [`${ANALYTICS}?to=now`, 'to'],
  ];
  for (const [path, parameter] of cases) {
    const res = await api.request('GET', path, { token: owner.token });
    t.is(res.status, 400, path);
    t.is(res.body.code, 'INVALID_REQUEST', path);
    t.regex(res.body.message, new RegExp(`Invalid query parameter ${parameter}:`), path);
  }
});

test('CSV export: headers, a header row, the filtered records newest first, formula-like cells defused', async (t) => {
  const owner = await signup(api, 'owner');
  const ids = await seed(owner.organizationId, [
    { userId: owner.userId, apiKeyId: 'key_csv', action: 'getDeployment', resourceId: '=HYPERLINK("http://evil")', statusCode: 404, createdAt: '2026-02-01T00:00:00Z' },
    { userId: owner.userId, action: 'createDeploymentV1', resourceId: 'dep_csv', statusCode: 201, createdAt: '2026-02-02T00:00:00Z' },
    { userId: owner.userId, action: 'createWebhook', resourceType: 'webhook', createdAt: '2026-02-03T00:00:00Z' },
  ]);
  const res = await download(`${EXPORT}?orgId=${owner.organizationId}&format=csv&resourceType=deployment`, owner.token);
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.regex(res.headers.get('content-disposition')!, new RegExp(`^attachment; filename="audit-${owner.organizationId}-[0-9TZ-]+\\.csv"$`));
  const lines = res.text.trimEnd().split('\n');
  t.is(lines[0], 'id,created_at,user_id,api_key_id,action,resource_type,resource_id,ip_address,status_code');
  t.is(lines[1], `${ids[1]},2026-02-02T00:00:00.000Z,${owner.userId},,createDeploymentV1,deployment,dep_csv,203.0.113.7,201`);
  t.is(lines[2], `${ids[0]},2026-02-01T00:00:00.000Z,${owner.userId},key_csv,getDeployment,deployment,"'=HYPERLINK(""http://evil"")",203.0.113.7,404`);
  t.is(lines.length, 3);

  const empty = await download(`${EXPORT}?orgId=${owner.organizationId}&format=csv&action=nothingLikeThis`, owner.token);
  t.is(empty.status, 200);
  t.is(empty.text, 'id,created_at,user_id,api_key_id,action,resource_type,resource_id,ip_address,status_code\n');
  t.is((await download(`${EXPORT}?orgId=${owner.organizationId}&action=createWebhook`, owner.token)).headers.get('content-type'), 'text/csv; charset=utf-8', 'csv by default');
});

test('JSON Lines export: headers, one record per line, the same records the list shows', async (t) => {
  const owner = await signup(api, 'owner');
  await seedMany(owner.organizationId, owner.userId, 30);
  const res = await download(`${EXPORT}?orgId=${owner.organizationId}&format=jsonl&from=2026-05-31T23:59:40Z`, owner.token);
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'application/x-ndjson');
  t.regex(res.headers.get('content-disposition')!, /^attachment; filename="audit-org_[0-9a-z]+-[0-9TZ-]+\.jsonl"$/);
  t.true(res.text.endsWith('\n'));
  const records = res.text.trimEnd().split('\n').map((line) => JSON.parse(line));
  const listed = await api.request('GET', `${AUDIT}?orgId=${owner.organizationId}&limit=100&from=2026-05-31T23:59:40Z`, { token: owner.token });
  t.is(records.length, 21);
  t.deepEqual(records, listed.body.data);
  t.is((await download(`${EXPORT}?orgId=${owner.organizationId}&format=jsonl&action=nothingLikeThis`, owner.token)).text, '');
});

test('an export of many records streams every one exactly once, in order, in chunks', async (t) => {
  const owner = await signup(api, 'owner');
  const count = 25_000;
  const idOf = await seedMany(owner.organizationId, owner.userId, count);
  const response = await fetch(`${api.url}${EXPORT}?orgId=${owner.organizationId}&format=csv&to=2026-06-02T00:00:00Z`, { headers: { authorization: `Bearer ${owner.token}` } });
  t.is(response.status, 200);
  t.is(response.headers.get('transfer-encoding'), 'chunked');
  t.is(response.headers.get('content-length'), null);
  let chunks = 0;
  let text = '';
  for await (const chunk of response.body!) {
    chunks += 1;
    text += Buffer.from(chunk).toString();
  }
  t.true(chunks > 1);
  const rows = parseCsv(text).slice(1);
  t.is(rows.length, count);
  // Seeded one second apart, newest (id 0) first.
  t.deepEqual(rows.map((r) => r[0]), Array.from({ length: count }, (_, i) => idOf(i)));

  const jsonl = await download(`${EXPORT}?orgId=${owner.organizationId}&format=jsonl&to=2026-06-02T00:00:00Z&sort=created_at`, owner.token);
  const lines = jsonl.text.trimEnd().split('\n');
  t.is(lines.length, count);
  t.is(JSON.parse(lines[0]!).id, idOf(count - 1));
  t.is(JSON.parse(lines.at(-1)!).id, idOf(0));
});

test('a client leaving mid-export does not disturb the API: the next export answers in full', async (t) => {
  const owner = await signup(api, 'owner');
  await seedMany(owner.organizationId, owner.userId, 20_000);
  const controller = new AbortController();
  const response = await fetch(`${api.url}${EXPORT}?orgId=${owner.organizationId}&format=jsonl`, { headers: { authorization: `Bearer ${owner.token}` }, signal: controller.signal });
  const reader = response.body!.getReader();
  t.false((await reader.read()).done);
  controller.abort();
  await t.throwsAsync(reader.read());
  const again = await download(`${EXPORT}?orgId=${owner.organizationId}&format=csv&from=2026-05-31T23:59:59Z`, owner.token);
  t.is(again.status, 200);
  t.is(again.text.trimEnd().split('\n').length, 3);
});

test('the export stream asks for the next batch only as the reader takes more, and stops when the reader leaves', async (t) => {
  let requested = 0;
  let closed = false;
  async function* batches() {
    try {
      for (let batch = 0; batch < 10_000; batch++) {
        requested += 1;
        yield Array.from({ length: 1_000 }, (_, i) => ({
          id: `aud_${batch}_${i}`, created_at: '2026-01-01T00:00:00.000Z', user_id: 'usr_x', api_key_id: null, action: 'listDeploymentsV1',
          resource_type: 'deployment', resource_id: null, ip_address: '203.0.113.7', status_code: 200,
        }));
      }
    } finally {
      closed = true;
    }
  }
  let chunks = 0;
  for await (const chunk of exportStream(batches(), 'csv')) {
    t.true(Buffer.byteLength(chunk) > 0);
    chunks += 1;
    if (chunks === 3) break;
  }
  await eventually('the batches to be closed', () => closed);
  t.true(requested <= 5, `${requested} batches read for 3 taken`);
});

test('analytics and audit: times PostgreSQL cannot hold (year 0, beyond 9999) are 400, never 500', async (t) => {
  const owner = await signup(api, 'owner');
  for (const query of ['from=0000-06-01T00:00:00Z', 'to=9999-12-31T23:00:00-05:00']) {
    for (const path of [ANALYTICS, AUDIT]) {
      const res = await api.request('GET', `${path}?orgId=${owner.organizationId}&${query}`, { token: owner.token });
      t.is(res.status, 400, `${path}?${query}`);
      t.is(res.body.code, 'INVALID_REQUEST');
    }
  }
});

test('analytics: requests and mutations by member, API key and deployment; deployments by GPU type', async (t) => {
  const owner = await signup(api, 'owner');
  const colleague = await member(owner.organizationId, 'admin');
  const key = await createApiKey(api, owner.token, 'full_access');
  const dep = await api.request('POST', '/v1/deployments', { token: key.key, body: validDeployment('busy') });
  t.is(dep.status, 201);
  await api.request('GET', `/api/deployments/${dep.body.id}`, { token: key.key });
  await api.request('GET', `/api/deployments/${dep.body.id}`, { token: key.key });
  await api.request('GET', '/api/deployments/dep_neverexisted000000', { token: key.key });
  const a10g = await api.request('POST', '/v1/deployments', {
    token: colleague.token, headers: { 'X-Organization-ID': owner.organizationId }, body: { ...validDeployment('big'), gpu: 'nvidia-a10g' },
  });
  t.is(a10g.status, 201);
  const deleted = await api.request('DELETE', `/api/deployments/${a10g.body.id}`, { token: colleague.token, headers: { 'X-Organization-ID': owner.organizationId } });
  t.is(deleted.status, 200);
  // A deployment gone before the period: counted nowhere.
  await api.pool.query(`INSERT INTO deployment (id, created_at, updated_at, organization_id, name, model, runtime, gpu, status, endpoint, replicas, min_replicas, max_replicas, current_replicas, deleted_at)
    VALUES ('dep_old00000000000000000', '2025-01-01', now(), $1, 'old', 'meta-llama/Llama-3.1-8B-Instruct', 'vllm', 'nvidia-l4', 'deleted', 'https://old.example', 1, 1, 1, 0, '2025-02-01')`, [owner.organizationId]);

  const res = await api.request('GET', ANALYTICS, { token: owner.token });
  t.is(res.status, 200);
  const body = res.body;
  t.true(Date.parse(body.period.to) - Date.parse(body.period.from) === 30 * 24 * 3600 * 1000);
  // Owner: key creation (session), create + 3 reads (key). Colleague: create + delete (session).
  t.deepEqual(body.totals, { requests: 7, mutations: 4 });
  t.deepEqual(body.byMember, [
    { userId: owner.userId, email: owner.email, name: body.byMember[0].name, requests: 5, mutations: 2 },
    { userId: colleague.userId, email: colleague.email, name: body.byMember[1].name, requests: 2, mutations: 2 },
  ]);
  t.deepEqual(body.byApiKey, [{ apiKeyId: key.id, name: 'full_access key', prefix: key.prefix, requests: 4, mutations: 1 }]);
  t.deepEqual(body.byDeployment, [
    { deploymentId: dep.body.id, name: 'busy', gpu: 'nvidia-l4', requests: 3, mutations: 1 },
    { deploymentId: a10g.body.id, name: 'big', gpu: 'nvidia-a10g', requests: 2, mutations: 2 },
  ]);
  t.deepEqual(body.deployments.byGpuType, [{ gpu: 'nvidia-a10g', created: 1, active: 1 }, { gpu: 'nvidia-l4', created: 1, active: 1 }]);

  const top = await api.request('GET', `${ANALYTICS}?limit=1`, { token: owner.token });
  t.is(top.body.byMember.length, 1);
  t.is(top.body.byDeployment[0].deploymentId, dep.body.id);

  const past = await api.request('GET', `${ANALYTICS}?from=2025-01-15T00:00:00Z&to=2025-03-01T00:00:00Z`, { token: owner.token });
  t.is(past.status, 200);
  t.deepEqual(past.body.totals, { requests: 0, mutations: 0 });
  t.deepEqual([past.body.byMember, past.body.byApiKey, past.body.byDeployment], [[], [], []]);
  t.deepEqual(past.body.deployments.byGpuType, [{ gpu: 'nvidia-l4', created: 0, active: 1 }]);
});

test('every route needs a credential', async (t) => {
  for (const path of [AUDIT, `${EXPORT}?format=csv`, ANALYTICS]) {
    const res = await api.request('GET', path);
    t.is(res.status, 401, path);
    t.is(res.body.code, 'INVALID_API_KEY');
    t.is((await api.request('GET', path, { token: 'sk_test_00000000000000000000000000000000' })).status, 401, path);
  }
});

test('roles: owners and admins read the audit and analytics; members and viewers cannot', async (t) => {
  const owner = await signup(api, 'owner');
  await seedMany(owner.organizationId, owner.userId, 3);
  for (const role of ['admin', 'member', 'viewer'] as const) {
    const user = await member(owner.organizationId, role);
    for (const path of [AUDIT, `${EXPORT}?format=jsonl`, ANALYTICS]) {
      const res = await download(`${path}${path.includes('?') ? '&' : '?'}orgId=${owner.organizationId}`, user.token);
      t.is(res.status, role === 'admin' ? 200 : 403, `${role} ${path}`);
      if (role !== 'admin') {
        t.is(JSON.parse(res.text).code, 'INSUFFICIENT_PERMISSIONS');
        t.false(res.text.includes(owner.userId));
      }
    }
  }
});

test('scopes: full access and read only keys read the audit; a deployments only key cannot', async (t) => {
  const owner = await signup(api, 'owner');
  await seedMany(owner.organizationId, owner.userId, 3);
  for (const scope of ['full_access', 'read_only', 'deployments_only'] as const) {
    const key = await createApiKey(api, owner.token, scope);
    for (const path of [AUDIT, `${EXPORT}?format=csv`, ANALYTICS]) {
      const res = await download(`${path}${path.includes('?') ? '&' : '?'}orgId=${owner.organizationId}`, key.key);
      t.is(res.status, scope === 'deployments_only' ? 403 : 200, `${scope} ${path}`);
    }
  }
});

test('another organization\'s records never appear; its orgId is refused as for every route', async (t) => {
  const mine = await signup(api, 'mine');
  const theirs = await signup(api, 'theirs');
  await seed(theirs.organizationId, [{ userId: theirs.userId, action: 'secretAction', resourceId: 'dep_theirs', createdAt: '2026-04-01T00:00:00Z' }]);
  await seed(mine.organizationId, [{ userId: mine.userId, action: 'myAction', createdAt: '2026-04-01T00:00:00Z' }]);
  const theirKey = await createApiKey(api, theirs.token, 'full_access');
  await api.request('POST', '/v1/deployments', { token: theirKey.key, body: validDeployment('theirs') });

  const list = await api.request('GET', `${AUDIT}?orgId=${mine.organizationId}&limit=100`, { token: mine.token });
  t.deepEqual(list.body.data.map((r: { action: string }) => r.action), ['myAction']);
  for (const query of [`userId=${theirs.userId}`, `apiKeyId=${theirKey.id}`, 'resourceId=dep_theirs', 'action=secretAction']) {
    t.deepEqual((await api.request('GET', `${AUDIT}?orgId=${mine.organizationId}&${query}`, { token: mine.token })).body.data, [], query);
  }
  for (const format of ['csv', 'jsonl']) {
    const exported = await download(`${EXPORT}?orgId=${mine.organizationId}&format=${format}`, mine.token);
    t.true(exported.text.includes('myAction'));
    for (const secret of [theirs.userId, theirKey.id, 'secretAction', 'dep_theirs', 'createDeploymentV1']) t.false(exported.text.includes(secret), `${format} ${secret}`);
  }
  const analytics = await api.request('GET', ANALYTICS, { token: mine.token });
  t.deepEqual(analytics.body.byApiKey, []);
  t.deepEqual(analytics.body.deployments.byGpuType, []);
  t.false(JSON.stringify(analytics.body).includes(theirs.userId));

  // Naming their organization: a session that is not a member, and a key of another organization, are refused.
  const myKey = await createApiKey(api, mine.token, 'full_access');
  for (const path of [AUDIT, EXPORT, ANALYTICS]) {
    for (const token of [mine.token, myKey.key]) {
      const res = await download(`${path}?orgId=${theirs.organizationId}`, token);
      t.is(res.status, 403, path);
      t.false(res.text.includes('secretAction'));
    }
    t.is((await download(`${path}?orgId=${mine.organizationId}`, mine.token)).status, 200);
  }
});

test('the OpenAPI document describes the export as CSV and JSON Lines, and the list and analytics as JSON', async (t) => {
  const { paths, components } = (await api.request('GET', '/v1/openapi')).body;
  const exported = paths[EXPORT].get;
  t.deepEqual(Object.keys(exported.responses['200'].content).sort(), ['application/x-ndjson', 'text/csv']);
  t.truthy(exported.responses['200'].headers['Content-Disposition']);
  t.true(exported.parameters.some((p: { name: string; schema: { enum?: string[] } }) => p.name === 'format' && p.schema.enum?.join() === 'csv,jsonl'));
  t.deepEqual(Object.keys(paths[AUDIT].get.responses['200'].content), ['application/json']);
  t.deepEqual(paths[AUDIT].get.parameters.map((p: { name: string }) => p.name).sort(),
    ['action', 'apiKeyId', 'cursor', 'from', 'limit', 'orgId', 'resourceId', 'resourceType', 'sort', 'to', 'userId']);
  for (const operation of [paths[AUDIT].get, exported]) {
    t.true(operation.parameters.find((p: { name: string }) => p.name === 'orgId').required, 'orgId is required');
  }
  t.false(paths[ANALYTICS].get.parameters.find((p: { name: string }) => p.name === 'orgId').required ?? false, 'analytics: optional');
  // The record's fields carry the spec's audit names, one spelling everywhere.
  const fields = ['action', 'api_key_id', 'created_at', 'id', 'ip_address', 'resource_id', 'resource_type', 'status_code', 'user_id'];
  t.deepEqual(Object.keys(components.schemas.AuditRecord.properties).sort(), fields);
  t.deepEqual(Object.keys(components.schemas.PlatformAuditRecord.properties).sort(), [...fields, 'organization_id'].sort());
  t.deepEqual(Object.keys(paths[ANALYTICS].get.responses['200'].content), ['application/json']);
});
