// POST /v1/admin/reports/generate and GET /v1/admin/reports/{id}[/download]: the API records the report
// and starts its workflow on the test run's real Temporal dev server, where a worker with Kiln's real
// report activities writes the CSV; the administrator polls, then downloads.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import anyTest, { type TestFn } from 'ava';
import { NativeConnection } from '@temporalio/worker';
import { ServiceUnavailableError } from '../../control-plane/core/errors.ts';
import { createReportService } from '../../control-plane/reports/service.ts';
import type { ReportWorkflowResult } from '../../workflows/contract/reports.ts';
import { createQueueWorker } from '../../workflows/queue.ts';
import { reportsQueue } from '../../workflows/reports/queue.ts';
import { signupAdmin } from '../support/admin.ts';
import { signup, startTestApi, validDeployment, type TestApi } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { installTestRuntime, testBundleDir, testTemporalAddress } from '../support/temporal.ts';
import type { Principal } from '../../control-plane/auth/principal.ts';

installTestRuntime();

interface Context { api: TestApi; admin: Awaited<ReturnType<typeof signupAdmin>>; stopWorker: () => Promise<void> }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'kiln-reports-'));
  const api = await startTestApi(import.meta.filename, { config: { dataDir } });
  const connection = await NativeConnection.connect({ address: testTemporalAddress() });
  const worker = await createQueueWorker(reportsQueue, { connection, bundleDir: testBundleDir(), activities: reportsQueue.activities({ orm: api.orm, dataDir }) });
  const running = worker.run();
  t.context = {
    api,
    admin: await signupAdmin(api),
    async stopWorker() {
      worker.shutdown();
      await running;
      await connection.close();
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

test('a customers report: answered at once with where to fetch it, written by its workflow, downloaded as CSV', async (t) => {
  const { api } = t.context;
  const customer = await signup(api, 'reported');
  await api.request('POST', '/v1/deployments', { token: customer.token, body: validDeployment('counted') });

  const res = await api.request('POST', '/v1/admin/reports/generate', { token: t.context.admin.token, body: { kind: 'customers' } });
  t.is(res.status, 201);
  t.like(res.body, { kind: 'customers', status: 'pending', rows: null, from: null, statusUrl: `/v1/admin/reports/${res.body.id}`, downloadUrl: `/v1/admin/reports/${res.body.id}/download` });
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

test('when Temporal cannot be reached the answer is 503 and the report is recorded as failed', async (t) => {
  const { api, admin } = t.context;
  const reports = createReportService({
    dir: tmpdir(), log: { error: () => undefined },
    orchestrator: { start: async () => { throw new Error('14 UNAVAILABLE: connection refused'); } },
  });
  const principal = { userId: admin.userId } as Principal;
  const error = await t.throwsAsync(reports.generate(api.orm.em.fork(), principal, { kind: 'customers' }), { instanceOf: ServiceUnavailableError });
  t.truthy(error);
  const rows = (await api.pool.query(`SELECT status, error FROM report WHERE status = 'failed' AND error LIKE '%could not be started%'`)).rows;
  t.is(rows.length, 1);
});
