// POST /v1/admin/reports/generate, GET /v1/admin/reports and GET /v1/admin/reports/{id}[/download]: the API
// records the report and starts its workflow on the test run's real Temporal dev server, where a worker with
// Kiln's real report activities writes the CSV into the database; the administrator lists or polls, then
// downloads. The worker shares nothing with the API but PostgreSQL and Temporal, as on another host: it has its
// own connection pool, and neither it nor the API is given a folder.
import { randomBytes } from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { DefaultLogger, NativeConnection } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createCursorCodec } from '../../control-plane/core/pagination.ts';
import { TENANT_ROLE } from '../../control-plane/core/row-level-security.ts';
import { openDatabase, type Orm } from '../../control-plane/database/orm.ts';
import { reportStarts } from '../../control-plane/reports/delivery.ts';
import { createReportOrchestrator } from '../../control-plane/reports/orchestrator.ts';
import { createReportService } from '../../control-plane/reports/service.ts';
import type { ReportWorkflowResult } from '../../workflows/contract/reports.ts';
import { createQueueWorker } from '../../workflows/queue.ts';
import { createReportActivities } from '../../workflows/reports/activities.ts';
import { reportsQueue } from '../../workflows/reports/queue.ts';
import { REPORT_CHUNK_BYTES, reportStore } from '../../workflows/reports/store.ts';
import { ADMIN_EMAIL, signupAdmin } from '../support/admin.ts';
import { createApiKey, signup, startTestApi, validDeployment, type TestApi } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { testBundleDir, testTemporalAddress } from '../support/temporal.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';
import type { Principal } from '../../control-plane/auth/principal.ts';

installTestRuntime();

interface Context { api: TestApi; admin: Awaited<ReturnType<typeof signupAdmin>>; stopWorker: () => Promise<void> }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const api = await startTestApi(import.meta.filename);
  const workerOrm: Orm = await openDatabase(api.databaseUrl, { migrate: false });
  const connection = await NativeConnection.connect({ address: testTemporalAddress() });
  const worker = await createQueueWorker(reportsQueue, { connection, bundleDir: testBundleDir(), activities: reportsQueue.activities({ orm: workerOrm }) });
  const running = worker.run();
  t.context = {
    api,
    admin: await signupAdmin(api),
    async stopWorker() {
      worker.shutdown();
      await running;
      await connection.close();
      await workerOrm.close();
    },
  };
});
test.after.always(async (t) => {
  await t.context.stopWorker?.();
  await t.context.api?.close();
});

async function generate(t: { context: Context }, body: unknown) {
  const res = await t.context.api.request('POST', '/v1/admin/reports/generate', { token: t.context.admin.token, body });
  if (res.status !== 201) throw new Error(`generate failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; statusUrl: string; downloadUrl: string };
}

async function finished(t: { context: Context }, id: string) {
  return eventually(`report ${id} to finish`, async () => {
    const res = await t.context.api.request('GET', `/v1/admin/reports/${id}`, { token: t.context.admin.token });
    return ['ready', 'failed'].includes(res.body.status) && res.body;
  });
}

/** The reports' values hold no commas, quotes or line breaks: a plain split reads them. */
function parseCsv(text: string): Record<string, string>[] {
  const [header, ...lines] = text.trimEnd().split('\n').map((line) => line.split(','));
  return lines.map((values) => Object.fromEntries(header!.map((column, i) => [column, values[i] ?? ''])));
}

async function download(t: { context: Context }, url: string) {
  const response = await fetch(t.context.api.url + url, { headers: { authorization: `Bearer ${t.context.admin.token}` } });
  return { response, rows: parseCsv(await response.text()) };
}

// Serial: it counts every organization, and the file's other tests sign up organizations of their own.
test.serial('a customers report: answered at once with where to fetch it, written by its workflow, downloaded as CSV', async (t) => {
  const { api } = t.context;
  const customer = await signup(api, 'reported');
  await api.request('POST', '/v1/deployments', { token: customer.token, body: validDeployment('counted') });

  const res = await api.request('POST', '/v1/admin/reports/generate', { token: t.context.admin.token, body: { kind: 'customers' } });
  t.is(res.status, 201);
  t.like(res.body, { kind: 'customers', status: 'pending', rows: null, from: null, requestedBy: { id: t.context.admin.userId, email: ADMIN_EMAIL }, statusUrl: `/v1/admin/reports/${res.body.id}`, downloadUrl: `/v1/admin/reports/${res.body.id}/download` });
  t.regex(res.body.id, /^rpt_/);

  const report = await finished(t, res.body.id);
  const organizations = (await api.pool.query('SELECT count(*)::int AS n FROM organization')).rows[0].n;
  t.like(report, { status: 'ready', error: null, rows: organizations });
  t.true(report.bytes > 0);
  t.truthy(report.completedAt);
  const result = await api.workflows.workflow.getHandle(res.body.id).result() as ReportWorkflowResult;
  t.deepEqual(result, { status: 'ready', rows: organizations });

  const { response, rows } = await download(t, res.body.downloadUrl);
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.is(response.headers.get('content-disposition'), `attachment; filename="customers-${res.body.id}.csv"`);
  t.is(rows.length, organizations);
  t.like(rows.find((r) => r.organization_id === customer.organizationId), { plan: 'free', members: '1', live_deployments: '1', credits_cents: '2500', requests_in_window: '1' });
});

test('deployment and audit reports hold the rows created in the window, oldest first', async (t) => {
  const { api } = t.context;
  const owner = await signup(api, 'windowed');
  const ids: string[] = [];
  for (const name of ['old', 'inside-1', 'inside-2']) {
    ids.push((await api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment(name) })).body.id);
  }
  await api.pool.query(`UPDATE deployment SET created_at = '2020-01-01T00:00:00Z' WHERE id = $1`, [ids[0]]);
  await api.pool.query(`UPDATE deployment SET created_at = '2024-06-01T00:00:00Z' WHERE id = $1`, [ids[1]]);
  await api.pool.query(`UPDATE deployment SET created_at = '2024-06-02T00:00:00Z' WHERE id = $1`, [ids[2]]);
  await api.pool.query(`UPDATE audit_log SET created_at = '2024-06-01T12:00:00Z' WHERE organization_id = $1`, [owner.organizationId]);

  const deployments = await generate(t, { kind: 'deployments', from: '2024-01-01T00:00:00Z', to: '2025-01-01T00:00:00Z' });
  t.like(await finished(t, deployments.id), { status: 'ready', rows: 2, from: '2024-01-01T00:00:00.000Z', to: '2025-01-01T00:00:00.000Z' });
  const { rows } = await download(t, deployments.downloadUrl);
  t.deepEqual(rows.map((r) => [r.deployment_id, r.name, r.organization_id, r.gpu, r.status]), [
    [ids[1], 'inside-1', owner.organizationId, 'nvidia-l4', 'pending'],
    [ids[2], 'inside-2', owner.organizationId, 'nvidia-l4', 'pending'],
  ]);

  const audit = await generate(t, { kind: 'audit', from: '2024-06-01T00:00:00Z', to: '2024-06-02T00:00:00Z' });
  t.like(await finished(t, audit.id), { status: 'ready', rows: 3 });
  const auditRows = (await download(t, audit.downloadUrl)).rows;
  t.deepEqual(auditRows.map((r) => r.action), ['createDeploymentV1', 'createDeploymentV1', 'createDeploymentV1']);
  t.true(auditRows.every((r) => r.organization_id === owner.organizationId && r.status_code === '201'));
});

test('a report over one chunk: written by the worker into the database in chunks, served whole by the API', async (t) => {
  const { api } = t.context;
  const owner = await signup(api, 'busy');
  // Audit records in a window of their own, enough for a CSV of about two and a half chunks (a line is ~170 bytes).
  const records = Math.ceil((REPORT_CHUNK_BYTES * 1.5) / 100);
  await api.pool.query(
    `INSERT INTO audit_log (id, created_at, organization_id, action, resource_type, user_id, ip_address, status_code)
     SELECT 'aud_bulk' || lpad(n::text, 16, '0'), '2023-03-01T00:00:00Z'::timestamptz + n * interval '1 millisecond', $1, 'listDeploymentsV1', 'deployment', $2, '203.0.113.7', 200
     FROM generate_series(1, $3::int) n`,
    [owner.organizationId, owner.userId, records]);

  const { id, downloadUrl } = await generate(t, { kind: 'audit', from: '2023-03-01T00:00:00Z', to: '2023-03-02T00:00:00Z' });
  const report = await finished(t, id);
  t.like(report, { status: 'ready', rows: records });
  const chunks = (await api.pool.query('SELECT length(data) AS bytes FROM report_chunk WHERE report_id = $1 ORDER BY sequence', [id])).rows.map((r) => r.bytes as number);
  t.true(chunks.length >= 2, `${chunks.length} chunks`);
  t.true(chunks.slice(0, -1).every((bytes) => bytes === REPORT_CHUNK_BYTES));

  const response = await fetch(api.url + downloadUrl, { headers: { authorization: `Bearer ${t.context.admin.token}` } });
  t.is(response.status, 200);
  const body = Buffer.from(await response.arrayBuffer());
  t.is(body.length, report.bytes, 'every byte the worker wrote');
  const rows = parseCsv(body.toString('utf8'));
  t.is(rows.length, records);
  t.deepEqual(rows.map((r) => r.audit_id), Array.from({ length: records }, (_, i) => `aud_bulk${String(i + 1).padStart(16, '0')}`), 'every record once, in order');
});

test('a report with no rows in its window is the header alone; written again, as a retried attempt writes it, it is replaced, not added to', async (t) => {
  const { api } = t.context;
  const { id, downloadUrl } = await generate(t, { kind: 'deployments', from: '1990-01-01T00:00:00Z', to: '1990-01-02T00:00:00Z' });
  t.like(await finished(t, id), { status: 'ready', rows: 0 });
  const fetchCsv = async () => (await fetch(api.url + downloadUrl, { headers: { authorization: `Bearer ${t.context.admin.token}` } })).text();
  const header = 'deployment_id,organization_id,name,model,gpu,status,replicas,created_at,deleted_at,failure_reason\n';
  t.is(await fetchCsv(), header);

  const activities = createReportActivities({ store: reportStore(api.orm) });
  t.deepEqual(await new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') }).run(activities.writeReport, { reportId: id }), { rows: 0 });
  t.is(await fetchCsv(), header);
  t.is((await api.pool.query('SELECT count(*)::int AS n FROM report_chunk WHERE report_id = $1', [id])).rows[0].n, 1);
});

test('a ready report\'s CSV is for platform administrators alone: no credential 401, another organization\'s owner and keys 403 with none of it; a malformed id 400; tenants\' database role cannot read report contents', async (t) => {
  const { api, admin } = t.context;
  const { downloadUrl } = await generate(t, { kind: 'customers' });
  t.like(await finished(t, downloadUrl.split('/')[4]!), { status: 'ready' });

  t.is((await api.request('GET', downloadUrl)).status, 401);
  t.is((await api.request('GET', downloadUrl, { token: 'kiln_not_a_key' })).status, 401);
  const owner = await signup(api, 'download-peeker');
  const ownersKey = await createApiKey(api, owner.token, 'full_access');
  const adminsDeploymentsKey = await createApiKey(api, admin.token, 'deployments_only');
  for (const [label, token] of [['another organization\'s owner', owner.token], ['their full-access key', ownersKey.key], ['admin\'s deployments-only key', adminsDeploymentsKey.key]] as const) {
    const res = await api.request('GET', downloadUrl, { token });
    t.is(res.status, 403, label);
    t.false(JSON.stringify(res.body).includes('organization_id'), `${label}: none of the CSV`);
  }
  const malformed = await api.request('GET', `/v1/admin/reports/rpt_${'x'.repeat(80)}/download`, { token: admin.token });
  t.is(malformed.status, 400);
  t.true(malformed.body.message.includes('id'), malformed.body.message);

  // Beneath the routes: the role tenant requests run as has no grant on report contents, which hold every organization's data.
  const client = await api.pool.connect();
  try {
    await client.query(`SET ROLE ${TENANT_ROLE}`);
    await t.throwsAsync(client.query('SELECT data FROM report_chunk'), { message: /permission denied/ });
  } finally {
    await client.query('RESET ROLE');
    client.release();
  }

  const readOnly = await createApiKey(api, admin.token, 'read_only');
  const response = await fetch(api.url + downloadUrl, { headers: { authorization: `Bearer ${readOnly.key}` } });
  t.is(response.status, 200, 'an administrator\'s read-only key downloads it');
  t.regex(await response.text(), /^organization_id,name,plan,/);
});

// Serial: it hides the audit table from the other tests' requests.
test.serial('a report whose data cannot be read fails after its retries, with the reason', async (t) => {
  const { api } = t.context;
  await api.pool.query('ALTER TABLE audit_log RENAME TO audit_log_away');
  let report;
  try {
    const { id } = await generate(t, { kind: 'audit' });
    report = await finished(t, id);
  } finally {
    await api.pool.query('ALTER TABLE audit_log_away RENAME TO audit_log');
  }
  t.is(report.status, 'failed');
  t.regex(report.error, /audit_log/);
  const res = await api.request('GET', report.downloadUrl, { token: t.context.admin.token });
  t.is(res.status, 409);
  t.regex(res.body.message, /failed, not ready/);
});

// Serial: it counts the reports, which the other tests add to.
test.serial('bad requests are 400 or 422 and record nothing; unknown ids are 404; a report not ready is 409', async (t) => {
  const { api, admin } = t.context;
  const count = async () => (await api.pool.query('SELECT count(*)::int AS n FROM report')).rows[0].n;
  const before = await count();
  for (const [body, status, field] of [
    [{ kind: 'revenue' }, 422, 'kind'],
    [{ kind: 'audit', from: 'last week' }, 422, 'from'],
    [{ kind: 'audit', from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }, 422, 'to'],
    [{ from: '2026-01-01T00:00:00Z' }, 400, 'kind'],
    [{ kind: 'audit', from: 20260101 }, 400, 'from'],
    [{ kind: 'audit', format: 'xlsx' }, 400, 'body'],
  ] as const) {
    const res = await api.request('POST', '/v1/admin/reports/generate', { token: admin.token, body });
    t.is(res.status, status, JSON.stringify(body));
    t.true(res.body.message.includes(field), res.body.message);
  }
  t.is(await count(), before);

  t.is((await api.request('GET', '/v1/admin/reports/rpt_unknown', { token: admin.token })).status, 404);
  t.is((await api.request('GET', '/v1/admin/reports/rpt_unknown/download', { token: admin.token })).status, 404);
  await api.pool.query(`INSERT INTO report (id, created_at, kind, status, requested_by) VALUES ('rpt_waiting', now(), 'audit', 'running', $1)`, [admin.userId]);
  const early = await api.request('GET', '/v1/admin/reports/rpt_waiting/download', { token: admin.token });
  t.is(early.status, 409);
  t.regex(early.body.message, /running, not ready/);

  const owner = await signup(api, 'nosy');
  t.is((await api.request('GET', '/v1/admin/reports/rpt_waiting', { token: owner.token })).status, 403);
  t.is((await api.request('POST', '/v1/admin/reports/generate', { token: owner.token, body: { kind: 'customers' } })).status, 403);
});

test('when Temporal cannot be reached the report is recorded pending at once, and its workflow is started once Temporal answers', async (t) => {
  const { api, admin } = t.context;
  const log = { error: () => undefined, info: () => undefined };
  const reports = createReportService({
    log, cursors: createCursorCodec(randomBytes(32)),
    orchestrator: { start: async () => { throw new Error('14 UNAVAILABLE: connection refused'); } },
  });
  const principal = { userId: admin.userId } as Principal;
  const recorded = await reports.generate(api.orm.em.fork(), principal, { kind: 'customers' });
  t.like(recorded, { kind: 'customers', status: 'pending', error: null });
  t.like((await api.pool.query('SELECT status, workflow_started_at FROM report WHERE id = $1', [recorded.id])).rows[0], { status: 'pending', workflow_started_at: null });

  // The pass of the API's loop, with Temporal back: started (and a second start refused by Temporal, not run twice).
  const orchestrator = createReportOrchestrator(api.workflows);
  t.true(await reportStarts({ orchestrator, log }).resend(api.orm, { graceMs: 0 }) >= 1);
  await orchestrator.start(recorded.id);
  t.like(await finished(t, recorded.id), { status: 'ready' });
  t.not((await api.pool.query('SELECT workflow_started_at FROM report WHERE id = $1', [recorded.id])).rows[0].workflow_started_at, null);
});

interface ReportBody { id: string; kind: string; status: string; createdAt: string; requestedBy: { id: string; email: string | null }; [k: string]: unknown }

/** Every page of GET /v1/admin/reports with `query`, following nextCursor; and how many pages it took. */
async function allReports(t: { context: Context }, query: string, token = t.context.admin.token) {
  const items: ReportBody[] = [];
  let pages = 0;
  let cursor: string | null = null;
  do {
    const res = await t.context.api.request('GET', `/v1/admin/reports?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
    if (res.status !== 200) throw new Error(`list failed: ${res.status} ${JSON.stringify(res.body)}`);
    pages++;
    items.push(...res.body.data);
    if (res.body.pagination.hasMore !== (res.body.pagination.nextCursor !== null)) throw new Error('hasMore and nextCursor disagree');
    cursor = res.body.pagination.nextCursor;
  } while (cursor);
  return { items, pages };
}

/** Inserts a report as the worker would have left it, at `createdAt`. */
async function insertReport(t: { context: Context }, id: string, createdAt: string, fields: { kind?: string; status?: string; requestedBy?: string } = {}) {
  await t.context.api.pool.query(
    'INSERT INTO report (id, created_at, kind, status, requested_by) VALUES ($1, $2, $3, $4, $5)',
    [id, createdAt, fields.kind ?? 'audit', fields.status ?? 'ready', fields.requestedBy ?? t.context.admin.userId],
  );
}

// Serial: it counts every report, which the concurrent tests add to.
test.serial('GET /v1/admin/reports: every report, whoever asked, newest first across cursor pages, each as GET /{id} shows it', async (t) => {
  const { api, admin } = t.context;
  // One asked for with the administrator's session, one with a service role key (another credential, as a script would).
  const bySession = await generate(t, { kind: 'deployments', from: '2024-01-01T00:00:00Z', to: '2025-01-01T00:00:00Z' });
  const serviceKey = await api.request('POST', '/v1/admin/service-keys', { token: admin.token, body: { name: 'report-script' } });
  const byKey = await api.request('POST', '/v1/admin/reports/generate', {
    token: serviceKey.body.key, headers: { 'x-organization-id': admin.organizationId }, body: { kind: 'customers' },
  });
  t.is(byKey.status, 201);
  await finished(t, bySession.id);
  await finished(t, byKey.body.id);
  // Three asked for at the same instant, after every other: the id breaks the tie, and a page boundary falls between them.
  for (const id of ['rpt_list_tie_a', 'rpt_list_tie_b', 'rpt_list_tie_c']) await insertReport(t, id, '2099-01-01T00:00:00.000Z');
  // Asked for by an account since deleted: still listed, with no e-mail.
  await insertReport(t, 'rpt_list_orphan', '2098-12-31T00:00:00.000Z', { requestedBy: 'usr_gone' });

  const { items, pages } = await allReports(t, 'limit=2');
  const total = (await api.pool.query('SELECT count(*)::int AS n FROM report')).rows[0].n;
  t.is(items.length, total, 'every report, once');
  t.is(new Set(items.map((r) => r.id)).size, items.length);
  t.is(pages, Math.ceil(total / 2));
  const order = items.map((r) => [r.createdAt, r.id] as const);
  t.deepEqual(order, [...order].sort((a, b) => (a[0] === b[0] ? b[1].localeCompare(a[1]) : b[0].localeCompare(a[0]))), 'newest first, then by id');
  t.deepEqual(items.slice(0, 4).map((r) => r.id), ['rpt_list_tie_c', 'rpt_list_tie_b', 'rpt_list_tie_a', 'rpt_list_orphan']);
  t.like(items.find((r) => r.id === 'rpt_list_orphan'), { requestedBy: { id: 'usr_gone', email: null } });
  t.true(items.findIndex((r) => r.id === byKey.body.id) < items.findIndex((r) => r.id === bySession.id), 'the later request first');

  for (const id of [bySession.id, byKey.body.id]) {
    const one = await api.request('GET', `/v1/admin/reports/${id}`, { token: admin.token });
    t.deepEqual(items.find((r) => r.id === id), one.body, 'the list shows what GET /{id} shows');
  }
  t.like(items.find((r) => r.id === byKey.body.id), { kind: 'customers', status: 'ready', requestedBy: { id: admin.userId, email: ADMIN_EMAIL } });
  t.like(items.find((r) => r.id === bySession.id), { kind: 'deployments', status: 'ready', from: '2024-01-01T00:00:00.000Z', to: '2025-01-01T00:00:00.000Z' });

  // The default page is 20, newest first.
  const first = await api.request('GET', '/v1/admin/reports', { token: admin.token });
  t.deepEqual(first.body.data.map((r: ReportBody) => r.id), items.slice(0, 20).map((r) => r.id));
  t.is(first.body.pagination.hasMore, total > 20);
});

test('GET /v1/admin/reports filters by kind and status, and pages within the filter', async (t) => {
  await insertReport(t, 'rpt_filter_1', '2097-01-03T00:00:00.000Z', { kind: 'audit', status: 'failed' });
  await insertReport(t, 'rpt_filter_2', '2097-01-02T00:00:00.000Z', { kind: 'audit', status: 'running' });
  await insertReport(t, 'rpt_filter_3', '2097-01-01T00:00:00.000Z', { kind: 'customers', status: 'failed' });
  await insertReport(t, 'rpt_filter_4', '2096-12-31T00:00:00.000Z', { kind: 'audit', status: 'failed' });

  const mine = (items: ReportBody[]) => items.map((r) => r.id).filter((id) => id.startsWith('rpt_filter_'));
  const audit = (await allReports(t, 'kind=audit&limit=1')).items;
  t.true(audit.every((r) => r.kind === 'audit'));
  t.deepEqual(mine(audit), ['rpt_filter_1', 'rpt_filter_2', 'rpt_filter_4']);
  const failed = (await allReports(t, 'status=failed&limit=1')).items;
  t.true(failed.every((r) => r.status === 'failed'));
  t.deepEqual(mine(failed), ['rpt_filter_1', 'rpt_filter_3', 'rpt_filter_4']);
  const both = (await allReports(t, 'kind=audit&status=failed&limit=1')).items;
  t.true(both.every((r) => r.kind === 'audit' && r.status === 'failed'));
  t.deepEqual(mine(both), ['rpt_filter_1', 'rpt_filter_4']);
  const none = await t.context.api.request('GET', '/v1/admin/reports?kind=deployments&status=pending', { token: t.context.admin.token });
  t.deepEqual(none.body, { data: none.body.data, pagination: { hasMore: false, nextCursor: null } });
  t.true(none.body.data.every((r: ReportBody) => r.kind === 'deployments' && r.status === 'pending'));
});

test('GET /v1/admin/reports: bad limits, kinds, statuses and cursors are 400 naming the parameter', async (t) => {
  const { api, admin } = t.context;
  const customers = await api.request('GET', '/v1/admin/customers?limit=1', { token: admin.token });
  const othersCursor = customers.body.pagination.nextCursor as string;
  t.truthy(othersCursor);
  for (const [query, parameter] of [
    ['limit=0', 'limit'], ['limit=101', 'limit'], ['limit=ten', 'limit'], ['kind=revenue', 'kind'], ['status=done', 'status'],
    ['cursor=forged.cursor', 'cursor'], [`cursor=${encodeURIComponent(othersCursor)}`, 'cursor'],
  ] as const) {
    const res = await api.request('GET', `/v1/admin/reports?${query}`, { token: admin.token });
    t.is(res.status, 400, query);
    t.true(res.body.message.includes(parameter), res.body.message);
  }
});

test('GET /v1/admin/reports is for platform administrators alone: no credential 401; an owner, their keys and an admin\'s deployments-only key 403', async (t) => {
  const { api, admin } = t.context;
  await insertReport(t, 'rpt_private', '2095-01-01T00:00:00.000Z');
  t.is((await api.request('GET', '/v1/admin/reports')).status, 401);
  t.is((await api.request('GET', '/v1/admin/reports', { token: 'kiln_not_a_key' })).status, 401);
  const owner = await signup(api, 'report-peeker');
  const ownersKey = await createApiKey(api, owner.token, 'full_access');
  const adminsDeploymentsKey = await createApiKey(api, admin.token, 'deployments_only');
  for (const [label, token] of [['organization owner', owner.token], ['owner\'s full-access key', ownersKey.key], ['admin\'s deployments-only key', adminsDeploymentsKey.key]] as const) {
    const res = await api.request('GET', '/v1/admin/reports', { token });
    t.is(res.status, 403, label);
    t.false(JSON.stringify(res.body).includes('rpt_private'), label);
    t.is((await api.request('GET', `/v1/admin/reports?orgId=${owner.organizationId}`, { token })).status, 403, `${label}, naming its own organization`);
  }
  // An administrator's read-only key reads the list.
  const readOnly = await createApiKey(api, admin.token, 'read_only');
  const listed = await api.request('GET', '/v1/admin/reports?limit=100', { token: readOnly.key });
  t.is(listed.status, 200);
  t.true(listed.body.data.some((r: ReportBody) => r.id === 'rpt_private'));
});
