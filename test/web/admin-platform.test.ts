// The platform administrator's reports, clusters, service keys and bulk actions in a real Chromium: a CSV
// report asked for (a bad window refused at its field), followed until ready and downloaded, listed beside one
// asked for through the API, in another browser too, and filtered by status; a service key
// created (its value shown once, gone after a reload), rotated and revoked after confirming, each old value
// refused by the API; the GPUs each cluster offers and its running deployments hold; a local GPU cluster
// registered by kubeconfig (a broken one, and a bad AWS subnet, refused at their fields), changed and removed
// after confirming; deployments of another organization stopped in bulk after a confirmation that counts
// them, with a result per deployment. An organization owner sees none of these pages. axe-core on each page; screenshots light, dark and on a phone.
import { readFile, stat } from 'node:fs/promises';
import test from 'ava';
import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { BrowserContextOptions, Page } from 'playwright-core';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { GpuClusterSchema } from '../../control-plane/clusters/gpu-cluster.entity.ts';
import { createReportActivities } from '../../workflows/reports/activities.ts';
import { reportStore } from '../../workflows/reports/store.ts';
import { ADMIN_EMAIL, signupAdmin, type Admin } from '../support/admin.ts';
import { desiredStatesSent, signup, validDeployment } from '../support/control-plane.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';
import { axe, checkPages, LOOKS, screenshot, startWebTest, type WebTestEnvironment } from './support/browser.ts';

let web: WebTestEnvironment;
let admin: Admin;
let gpuCluster: GpuCluster;

test.before(async () => {
  [web, gpuCluster] = await Promise.all([startWebTest(import.meta.filename), startTestGpuCluster()]);
  admin = await signupAdmin(web.api);
});
test.after.always(async () => {
  await web?.close();
  await gpuCluster?.stop();
});

/** Signs in through the form and lands on `path`. */
async function signedIn(path: string, options: { email?: string; context?: BrowserContextOptions } = {}): Promise<Page> {
  return web.signIn(path, options.email ?? ADMIN_EMAIL, options.context);
}

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
const fieldInvalid = async (page: Page, label: string) => (await page.getByLabel(label, { exact: true }).getAttribute('aria-invalid')) === 'true';

/**
 * The report worker's own activity writes the CSV, run here in place of a worker: the kiln-reports task
 * queue of the test run's Temporal server is shared by test files running at the same time.
 */
function writeReport(reportId: string) {
  const activities = createReportActivities({ store: reportStore(web.api.orm) });
  return new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') }).run(activities.writeReport, { reportId });
}

// One test at a time: the registered cluster is gone before the bulk test places deployments.
test.serial('reports: a bad window refused at its field; a customers report followed until ready and downloaded as CSV with the session; listed with one asked for through the API, filtered, and in another browser', async (t) => {
  const page = await signedIn('/');
  await nav(page).getByRole('link', { name: 'Reports' }).click();
  await page.getByRole('heading', { name: 'Reports', level: 1 }).waitFor();
  await page.getByRole('heading', { name: 'No reports yet' }).waitFor();
  // Only Reports is the current entry, not Operations (/admin) above it.
  t.is(await nav(page).getByRole('link', { name: 'Reports' }).getAttribute('aria-current'), 'page');
  t.is(await nav(page).getByRole('link', { name: 'Operations' }).getAttribute('aria-current'), null);
  await axe(t, page, 'reports (empty)');

  await page.getByLabel('From', { exact: true }).fill('2026-03-02T10:00');
  await page.getByLabel('To', { exact: true }).fill('2026-03-01T10:00');
  await page.getByRole('button', { name: 'Generate report' }).click();
  await page.locator('.field-error').filter({ hasText: 'must be after from' }).waitFor();
  t.true(await fieldInvalid(page, 'To'), 'the error is at To');
  t.false(await fieldInvalid(page, 'From'));

  await page.getByLabel('From', { exact: true }).fill('');
  await page.getByLabel('To', { exact: true }).fill('');
  await page.getByLabel(/^Customers/).check();
  await page.getByRole('button', { name: 'Generate report' }).click();
  const table = page.getByRole('table', { name: 'Reports' });
  const row = table.getByRole('row', { name: /Customers/ });
  await row.getByText('pending').waitFor();
  t.false(await fieldInvalid(page, 'To'), 'the corrected form is clean');
  const reportId = (await row.locator('code').innerText()).trim();
  t.regex(reportId, /^rpt_/);

  // The page keeps asking until the report is written.
  await writeReport(reportId);
  const button = row.getByRole('button', { name: `Download Customers report ${reportId} as CSV` });
  await button.waitFor();
  const organizations = (await web.api.pool.query('SELECT count(*)::int AS n FROM organization')).rows[0].n as number;
  t.is((await row.locator('td[data-label="Rows"]').innerText()).trim(), String(organizations), 'ready, with its row count');
  await axe(t, page, 'reports (ready)');

  const [download, response] = await Promise.all([
    page.waitForEvent('download'),
    page.waitForResponse((r) => r.url().endsWith(`/v1/admin/reports/${reportId}/download`)),
    button.click(),
  ]);
  t.is(response.status(), 200);
  t.regex(response.headers()['content-type'] ?? '', /^text\/csv/);
  t.is(download.suggestedFilename(), `customers-${reportId}.csv`);
  const file = await download.path();
  const { bytes } = (await web.api.pool.query('SELECT bytes FROM report WHERE id = $1', [reportId])).rows[0];
  t.is((await stat(file)).size, Number(bytes), 'the whole file');
  const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
  t.regex(lines[0]!, /^organization_id,name,plan,/);
  t.is(lines.length - 1, organizations);
  t.true(lines.some((line) => line.includes('Kiln operations')));

  // A report asked for through the API, not this browser, is listed too (after Refresh), newest first, with who asked.
  const viaApi = await web.api.request('POST', '/v1/admin/reports/generate', { token: admin.token, body: { kind: 'audit' } });
  t.is(viaApi.status, 201);
  await page.getByRole('button', { name: 'Refresh' }).click();
  const apiRow = table.getByRole('row', { name: new RegExp(viaApi.body.id) });
  await apiRow.getByText('pending').waitFor();
  t.regex(await apiRow.locator('td[data-label="Asked for"]').innerText(), new RegExp(`by ${ADMIN_EMAIL}`));
  const listed = async (p: Page) => Promise.all((await p.getByRole('table', { name: 'Reports' }).locator('td[data-label="Report"] code').all()).map(async (c) => (await c.innerText()).trim()));
  t.deepEqual(await listed(page), [viaApi.body.id, reportId]);

  // Filtered by status in the address: only the pending one; cleared, both again.
  const filters = page.getByRole('search', { name: 'Reports' });
  await filters.getByLabel('Status').selectOption('pending');
  await filters.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL((url) => url.searchParams.get('status') === 'pending');
  await table.getByRole('row', { name: /Customers/ }).waitFor({ state: 'detached' });
  t.deepEqual(await listed(page), [viaApi.body.id]);
  await axe(t, page, 'reports (filtered)');
  await filters.getByRole('button', { name: 'Clear filters' }).click();
  await table.getByRole('row', { name: /Customers/ }).waitFor();

  // The page follows the API's report until ready as it does its own.
  await writeReport(viaApi.body.id);
  await apiRow.getByRole('button', { name: `Download Audit report ${viaApi.body.id} as CSV` }).waitFor();

  // Another browser, which asked for neither, lists both from the API.
  const other = await signedIn('/admin/reports');
  await other.getByRole('table', { name: 'Reports' }).getByRole('row', { name: /Customers/ }).getByText('ready').waitFor();
  t.deepEqual(await listed(other), [viaApi.body.id, reportId]);
});

test.serial('service keys: created with the value shown once (gone after a reload), rotated and revoked after confirming; old values refused', async (t) => {
  const page = await signedIn('/admin/service-keys');
  await page.getByRole('heading', { name: 'No service keys' }).waitFor();
  await axe(t, page, 'service keys (empty)');
  const works = async (key: string) => (await web.api.request('GET', '/v1/admin/service-keys', { token: key, headers: { 'X-Organization-Id': admin.organizationId } })).status;

  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('.field-error').first().waitFor();
  t.true(await fieldInvalid(page, 'Name'), 'an empty name is refused at its field');

  await page.getByLabel('Name', { exact: true }).fill('billing-sync');
  await page.getByRole('button', { name: 'Create key' }).click();
  const value = page.getByTestId('service-key-value');
  await value.waitFor();
  const first = (await value.innerText()).trim();
  t.regex(first, /^srk_test_/);
  t.false(await fieldInvalid(page, 'Name'));
  await page.getByRole('button', { name: 'Copy key' }).click();
  await page.getByRole('button', { name: 'Copied', exact: true }).waitFor();
  t.is(await page.evaluate(() => navigator.clipboard.readText()), first);
  const row = page.getByRole('table', { name: 'Service keys' }).getByRole('row', { name: /billing-sync/ });
  await row.waitFor();
  t.false((await row.innerText()).includes(first), 'the list shows the prefix only');
  t.is(await works(first), 200, 'the key works');
  await axe(t, page, 'service keys (value shown)');
  await screenshot(page, 'admin-service-key-created');

  await page.reload();
  await row.waitFor();
  t.is(await page.getByTestId('service-key-value').count(), 0, 'the value is not shown again');
  t.false((await page.locator('main').innerText()).includes(first));

  await row.getByRole('button', { name: 'Rotate billing-sync' }).click();
  const rotate = page.getByRole('dialog', { name: 'Rotate “billing-sync”?' });
  t.true(await rotate.getByRole('button', { name: 'Cancel' }).evaluate((b) => b === document.activeElement), 'Cancel is focused first');
  await axe(t, page, 'rotate dialog');
  await rotate.getByRole('button', { name: 'Rotate key' }).click();
  await page.getByRole('heading', { name: 'Key “billing-sync” rotated' }).waitFor();
  const second = (await value.innerText()).trim();
  t.not(second, first);
  t.is(await works(first), 401, 'the old value stopped working');
  t.is(await works(second), 200);

  await row.getByRole('button', { name: 'Revoke billing-sync' }).click();
  const revoke = page.getByRole('dialog', { name: 'Revoke “billing-sync”?' });
  await page.keyboard.press('Escape');
  await revoke.waitFor({ state: 'hidden' });
  t.is(await works(second), 200, 'Escape revoked nothing');
  await row.getByRole('button', { name: 'Revoke billing-sync' }).click();
  await revoke.getByRole('button', { name: 'Revoke key' }).click();
  await page.getByRole('heading', { name: 'No service keys' }).waitFor();
  t.is(await page.getByTestId('service-key-value').count(), 0, 'a revoked key\'s value is not left on show');
  t.is(await works(second), 401);
});

test.serial('clusters: the list with status and GPUs offered and in use; a broken kubeconfig and a bad AWS subnet refused at their fields; a local cluster registered, its gateway changed, then removed after confirming', async (t) => {
  // One running deployment on the shared cluster: one of its L4s in use.
  const tenant = await signup(web.api, 'cluster-tenant');
  const running = await web.api.request('POST', '/v1/deployments', { token: tenant.token, body: validDeployment('holds-an-l4') });
  t.is(running.status, 201);
  await web.api.pool.query(`UPDATE deployment SET status = 'running' WHERE id = $1`, [running.body.id]);
  const page = await signedIn('/admin/clusters');
  const table = page.getByRole('table', { name: 'GPU clusters' });
  const shared = table.getByRole('row', { name: /test-cluster/ });
  await shared.waitFor();
  await shared.getByText('NVIDIA L4 24GB: 1 of 64 in use').waitFor();
  await shared.getByText('NVIDIA H100 80GB: 0 of 64 in use').waitFor();
  await page.getByRole('heading', { name: /^Clusters \(1, 1 of \d+ GPUs in use\)$/ }).waitFor();
  t.regex(await shared.innerText(), /Everyone[\s\S]*ready/);
  await axe(t, page, 'clusters');

  await page.getByLabel('Name', { exact: true }).fill('local-gpus');
  await page.getByLabel('Kubeconfig', { exact: true }).fill('apiVersion: v1\nkind: Config\n');
  await page.getByRole('button', { name: 'Register cluster' }).click();
  await page.locator('.field-error').first().waitFor();
  t.true(await fieldInvalid(page, 'Kubeconfig'), 'the kubeconfig is refused at its field');
  t.false(await fieldInvalid(page, 'Name'));
  await axe(t, page, 'clusters (refused kubeconfig)');

  // Provisioning on AWS: a subnet id of the wrong form is refused at its field before anything is made.
  await page.getByLabel(/^Provision on AWS/).check();
  await page.getByLabel('Region', { exact: true }).fill('us-east-1');
  await page.getByLabel('Subnet ids', { exact: true }).fill('subnet-0123abcd\nsubnet-nope');
  await page.getByRole('button', { name: 'Provision cluster' }).click();
  await page.locator('.field-error').filter({ hasText: /subnet id/ }).waitFor();
  t.true(await fieldInvalid(page, 'Subnet ids'));
  t.is((await web.api.request('GET', '/v1/admin/clusters', { token: admin.token })).body.length, 1, 'nothing was made');
  await axe(t, page, 'clusters (AWS form)');
  await page.getByLabel(/^Register a Kubernetes cluster/).check();

  await page.getByLabel('Kubeconfig', { exact: true }).fill(await readFile(gpuCluster.kubeconfig, 'utf8'));
  await page.getByRole('button', { name: 'Register cluster' }).click();
  const local = table.getByRole('row', { name: /local-gpus/ });
  await local.waitFor();
  // What the cluster's nodes offer: two 1-GPU L4 nodes and one 8-GPU H100 node.
  await local.getByText('NVIDIA L4 24GB: 0 of 2 in use').waitFor();
  await local.getByText('NVIDIA H100 80GB: 0 of 8 in use').waitFor();
  t.false(await fieldInvalid(page, 'Kubeconfig'));
  t.is(await page.getByLabel('Kubeconfig', { exact: true }).inputValue(), '', 'the form is emptied: the kubeconfig is not left on the page');

  // Changed: a gateway that is no URL refused at its field, then one set (Kiln reads the GPUs again).
  await local.getByRole('button', { name: 'Change local-gpus' }).click();
  const change = page.getByRole('region', { name: 'Change local-gpus' });
  await change.getByLabel('Inference gateway URL').fill('not a url');
  await change.getByRole('button', { name: 'Save changes' }).click();
  await change.locator('.field-error').first().waitFor();
  t.is(await change.getByLabel('Inference gateway URL').getAttribute('aria-invalid'), 'true');
  await axe(t, page, 'change cluster (refused gateway)');
  await change.getByLabel('Inference gateway URL').fill('https://gateway.local-gpus.example.com');
  await change.getByRole('button', { name: 'Save changes' }).click();
  await change.waitFor({ state: 'detached' });
  await local.getByText('https://gateway.local-gpus.example.com').waitFor();
  await local.getByText('NVIDIA H100 80GB: 0 of 8 in use').waitFor();

  await local.getByRole('button', { name: 'Remove local-gpus' }).click();
  const dialog = page.getByRole('dialog', { name: 'Remove the cluster local-gpus?' });
  await dialog.getByText('Kiln forgets the cluster').waitFor();
  await axe(t, page, 'remove cluster dialog');
  await dialog.getByRole('button', { name: 'Remove cluster' }).click();
  await local.waitFor({ state: 'detached' });
  t.is((await web.api.request('GET', '/v1/admin/clusters', { token: admin.token })).body.filter((c: { name: string }) => c.name === 'local-gpus').length, 0);
  await shared.waitFor();
});

test.serial('a local cluster\'s node pools in the dashboard: a size refused at its field, a pool resized and one added, then that one removed', async (t) => {
  // A local cluster as npm start registers one (its workflow, which no worker here runs, would apply what is saved).
  const id = 'clu_dashboardpools00';
  const l4 = { name: 'l4', gpuType: 'nvidia-l4', minSize: 1, desiredSize: 2, maxSize: 4, gpusPerNode: 1 };
  await web.api.orm.em.fork().insert(GpuClusterSchema, {
    id, name: 'pools-local', provider: 'local', status: 'ready', gpus: [{ gpuType: 'nvidia-l4', count: 2 }], spec: { nodePools: [l4] }, createdAt: new Date(), updatedAt: new Date(),
  });
  t.teardown(() => web.api.pool.query('DELETE FROM gpu_cluster WHERE id = $1', [id]));
  const saved = async () => (await web.api.request('GET', `/v1/admin/clusters/${id}`, { token: admin.token })).body;
  const page = await signedIn('/admin/clusters');
  const row = page.getByRole('table', { name: 'GPU clusters' }).getByRole('row', { name: /pools-local/ });
  await row.getByRole('button', { name: 'Change pools-local' }).click();
  const change = page.getByRole('region', { name: 'Change pools-local' });
  await change.getByText('nvidia-l4, 1 GPU a node').waitFor();

  // A maximum below the desired size: refused at its field, nothing saved.
  await change.getByLabel('Pool l4: maximum nodes').fill('1');
  await change.getByRole('button', { name: 'Save changes' }).click();
  await change.locator('.field-error').first().waitFor();
  t.regex(await change.locator('.field-error').first().innerText(), /minSize <= desiredSize <= maxSize/);
  t.deepEqual((await saved()).nodePools, [l4], 'nothing was saved');
  await axe(t, page, 'change local cluster (refused pool sizes)');

  // Resized, and an H100 pool added: one PATCH with both, which the cluster's workflow is sent.
  await change.getByLabel('Pool l4: maximum nodes').fill('12');
  await change.getByLabel('Pool l4: desired nodes').fill('3');
  await change.getByRole('button', { name: 'Add a node pool' }).click();
  await change.getByLabel('Pool 2: name').fill('h100');
  await change.getByLabel('Pool 2: GPU type').selectOption('nvidia-h100-80gb');
  await change.getByLabel('Pool 2: GPUs per node').fill('8');
  await change.getByLabel('Pool 2: minimum nodes').fill('0');
  await change.getByLabel('Pool 2: desired nodes').fill('1');
  await change.getByLabel('Pool 2: maximum nodes').fill('2');
  await change.getByRole('button', { name: 'Save changes' }).click();
  await change.waitFor({ state: 'detached' });
  const h100 = { name: 'h100', gpuType: 'nvidia-h100-80gb', minSize: 0, desiredSize: 1, maxSize: 2, gpusPerNode: 8 };
  t.like(await saved(), { nodePools: [{ ...l4, desiredSize: 3, maxSize: 12 }, h100], status: 'scaling' });

  // Removed again.
  await row.getByRole('button', { name: 'Change pools-local' }).click();
  await change.getByRole('button', { name: 'Remove pool h100' }).click();
  await change.getByRole('button', { name: 'Save changes' }).click();
  await change.waitFor({ state: 'detached' });
  t.deepEqual((await saved()).nodePools, [{ ...l4, desiredSize: 3, maxSize: 12 }]);
});

test.serial('bulk actions: ids refused at their field; another organization\'s deployments stopped after a confirmation that counts them, with a result each', async (t) => {
  const owner = await signup(web.api, 'bulk-owner');
  const ids: string[] = [];
  for (const name of ['chat-a', 'chat-b']) {
    const res = await web.api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment(name) });
    t.is(res.status, 201);
    ids.push(res.body.id);
  }
  const page = await signedIn('/admin/bulk-actions');
  await page.getByRole('heading', { name: 'Nothing sent yet' }).waitFor();
  await axe(t, page, 'bulk actions');

  // No id: said at the field before anything is sent.
  await page.getByRole('button', { name: 'Stop 0 deployments…' }).click();
  await page.locator('.field-error').filter({ hasText: 'at least one' }).waitFor();
  t.true(await fieldInvalid(page, 'Deployment ids'));

  // An id the API refuses: its error lands at the field once the dialog closes.
  await page.getByLabel('Deployment ids', { exact: true }).fill('dep_'.padEnd(70, 'x'));
  await page.getByRole('button', { name: 'Stop 1 deployment…' }).click();
  await page.getByRole('dialog', { name: 'Stop 1 deployment?' }).getByRole('button', { name: 'Stop 1 deployment', exact: true }).click();
  await page.locator('.field-error').filter({ hasText: /64/ }).waitFor();
  t.true(await fieldInvalid(page, 'Deployment ids'));
  t.is(await page.getByRole('heading', { name: 'Nothing sent yet' }).count(), 1, 'nothing was done');

  // Chosen without typing: the failed deployments Operations lists are added to what is there.
  const failedOne = await web.api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('chat-failed') });
  await web.api.pool.query(`UPDATE deployment SET status = 'failed', failure_reason = 'image pull failed' WHERE id = $1`, [failedOne.body.id]);
  await page.getByLabel('Deployment ids', { exact: true }).fill(ids[0]!);
  await page.getByRole('button', { name: 'Add every failed deployment' }).click();
  await page.getByText('1 deployment added (1 deployment failed in all).').waitFor();
  t.is(await page.getByLabel('Deployment ids', { exact: true }).inputValue(), `${ids[0]}\n${failedOne.body.id}`);
  await page.getByRole('button', { name: 'Stop 2 deployments…' }).waitFor();

  const unknown = 'dep_doesnotexist00000000';
  await page.getByLabel('Deployment ids', { exact: true }).fill(`${ids[0]}\n${ids[1]}, ${ids[0]}\n${unknown}`);
  await page.getByText('3 deployments (1 repeated id counted once)').waitFor();
  await page.getByRole('button', { name: 'Stop 3 deployments…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Stop 3 deployments?' });
  t.deepEqual((await dialog.locator('li').allInnerTexts()).sort(), [...ids, unknown].sort(), 'the dialog names each deployment once');
  t.true(await dialog.getByRole('button', { name: 'Cancel' }).evaluate((b) => b === document.activeElement), 'Cancel is focused first');
  await axe(t, page, 'bulk confirmation');
  await screenshot(page, 'admin-bulk-confirm', { fullPage: false });
  await dialog.getByRole('button', { name: 'Stop 3 deployments', exact: true }).click();

  await page.getByText(/Stop: 2 done, 1 not found, 0 refused/).waitFor();
  const results = page.getByRole('table', { name: 'Result per deployment' });
  for (const id of ids) t.regex(await results.getByRole('row', { name: new RegExp(id) }).innerText(), /Done/);
  t.regex(await results.getByRole('row', { name: new RegExp(unknown) }).innerText(), /Not found/);
  t.false(await fieldInvalid(page, 'Deployment ids'));
  // Each deployment's workflow was told to stop it, as if its owner had.
  for (const id of ids) t.like((await desiredStatesSent(web.api, id)).at(-1), { running: false });
  await axe(t, page, 'bulk result');
  // From the top: a whole-page picture of a scrolled page paints the sticky header where the view was.
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, 'admin-bulk-result');
});

test.serial('an organization owner sees none of these pages in the navigation and is told they are not theirs by address', async (t) => {
  const owner = await signup(web.api, 'not-admin');
  const page = await signedIn('/', { email: owner.email });
  await nav(page).getByRole('link', { name: 'Models' }).waitFor();
  for (const [path, title] of [['/admin/reports', 'Reports'], ['/admin/clusters', 'Clusters'], ['/admin/service-keys', 'Service keys'], ['/admin/bulk-actions', 'Bulk actions']] as const) {
    t.is(await nav(page).getByRole('link', { name: title, exact: true }).count(), 0, `${title} is not in the navigation`);
    await page.goto(path);
    await page.getByRole('heading', { name: 'Not allowed', level: 1 }).waitFor();
    t.true(await page.getByText(`${title} is for platform administrators`).isVisible());
  }
  await axe(t, page, 'not allowed');
});

test.serial('screenshots: reports, clusters, service keys and bulk actions, light, dark and on a phone', async (t) => {
  const key = await web.api.request('POST', '/v1/admin/service-keys', { token: admin.token, body: { name: 'metrics-exporter' } });
  t.is(key.status, 201);
  const pages: readonly [string, string, string][] = [
    ['admin-reports', '/admin/reports', 'Reports, newest first'],
    ['admin-clusters', '/admin/clusters', 'Add a cluster'],
    ['admin-service-keys', '/admin/service-keys', 'Keys in use'],
    ['admin-bulk-actions', '/admin/bulk-actions', 'Choose deployments and an action'],
  ];
  for (const [look, context] of LOOKS) {
    const page = await signedIn('/', { context });
    await checkPages(t, page, look, pages);
  }
});
