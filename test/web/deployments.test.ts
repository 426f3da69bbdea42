// The deployment pages in Chromium against a test API (no worker: rows are written as the worker would write
// them): the list pages through 120 deployments 50 at a time and shows a status change the moment the row
// changes, without reloading; a failed deployment's page says why and offers recovery, force delete only after
// confirming; stop and restart ask first, each lifecycle action says it is under way until the status settles,
// and the timeline shows the history (older events on asking) and each step live; a viewer gets no lifecycle
// control. The whole journey with a worker is test/e2e/web-deployments.test.ts.
import test from 'ava';
import type { Page } from 'playwright-core';
import { createStatusStore } from '../../workflows/deployment/status-store.ts';
import { addMember, desiredStatesSent, signup, type TestApi } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { axe, LAPTOP, PHONE, screenshot, startWebTest, type WebTestEnvironment } from './support/browser.ts';

let web: WebTestEnvironment;
test.before(async () => {
  web = await startWebTest(import.meta.filename);
});
test.after.always(async () => {
  await web?.close();
});

/** A signed-in page for a new user, with `rows` deployments written into its organization. */
async function userWithDeployments(api: TestApi, rows: number, status = 'running', failureReason: string | null = null) {
  const user = await signup(api, 'deployer');
  await api.pool.query(`
    INSERT INTO deployment (id, created_at, updated_at, organization_id, name, model, runtime, gpu, status, endpoint, replicas, min_replicas, max_replicas, current_replicas, failure_reason)
    SELECT 'dep_' || md5($1 || i::text), now() - make_interval(secs => i), now(), $1, 'web-' || i, 'meta-llama/Llama-3.1-8B-Instruct',
           'vllm', 'nvidia-l4', $3, 'https://web.example', 1, 1, 2, 1, $4
    FROM generate_series(1, $2::int) AS i`, [user.organizationId, rows, status, failureReason]);
  const page = await web.withSession(user, user.organizationId);
  return { user, page };
}


/** The id of the organization's one deployment. */
async function onlyDeployment(api: TestApi, organizationId: string): Promise<string> {
  const { rows } = await api.pool.query<{ id: string }>('SELECT id FROM deployment WHERE organization_id = $1', [organizationId]);
  return rows[0]!.id;
}

/** The timeline's lines, newest first: each line's label (its first words). */
const timelineLabels = async (page: Page) => (await page.getByTestId('timeline').locator('li strong').allInnerTexts()).map((s) => s.trim());

const rowCount = (page: Page) => page.locator('table tbody tr').count();

test('the list pages 50 at a time and shows a status change live, without reloading', async (t) => {
  const { user, page } = await userWithDeployments(web.api, 120);
  await page.goto('/deployments');
  await page.getByRole('row', { name: /web-1 / }).waitFor();
  t.is(await rowCount(page), 50, 'the first page');
  await page.getByRole('button', { name: 'Show 50 more' }).click();
  await page.getByRole('row', { name: /web-100 / }).waitFor();
  t.is(await rowCount(page), 100);
  await page.getByRole('button', { name: 'Show 50 more' }).click();
  await page.getByRole('row', { name: /web-120 / }).waitFor();
  t.is(await rowCount(page), 120, 'every deployment, once');
  t.false(await page.getByRole('button', { name: 'Show 50 more' }).isVisible(), 'nothing more to show');

  // The worker's status store writes the row; the socket brings it to the page.
  await page.evaluate(() => { (window as unknown as { stayed: boolean }).stayed = true; });
  await web.api.pool.query("UPDATE deployment SET status = 'failed' WHERE organization_id = $1 AND name = 'web-3'", [user.organizationId]);
  await page.getByRole('row', { name: /web-3 / }).getByText('failed').waitFor();
  t.true(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed === true), 'the page was not reloaded');
  t.regex(await page.getByRole('row', { name: /web-2 / }).innerText(), /running[\s\S]*1\/1[\s\S]*\$0\.80/, 'status, replicas and cost per hour');
});

test('a failed deployment says why and offers recovery; force delete asks first', async (t) => {
  const { page } = await userWithDeployments(web.api, 1, 'failed', 'ImagePullBackOff: the model server image could not be pulled');
  await page.goto('/deployments');
  await page.getByRole('link', { name: 'web-1' }).click();
  await page.getByRole('heading', { name: 'The last rollout failed' }).waitFor();
  t.is(await page.getByTestId('failure-reason').innerText(), 'ImagePullBackOff: the model server image could not be pulled');
  for (const option of ['Retry', 'Refresh and retry', 'Force delete']) t.true(await page.getByRole('button', { name: option, exact: true }).isVisible(), option);
  t.true(await page.getByTestId('deployment-status').getByText('failed').isVisible());
  await axe(t, page, 'a failed deployment');
  await screenshot(page, 'deployment-failed');

  await page.getByRole('button', { name: 'Force delete', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: /Force delete “web-1”/ });
  await dialog.waitFor();
  t.true(await dialog.getByRole('button', { name: 'Cancel' }).evaluate((b) => b === document.activeElement), 'Cancel has the focus');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  t.true(await page.getByTestId('deployment-status').getByText('failed').isVisible(), 'nothing happened');
});

test('stop and restart ask first; stop, start and restart say they are under way, and the timeline shows each step', async (t) => {
  const { user, page } = await userWithDeployments(web.api, 1);
  const id = await onlyDeployment(web.api, user.organizationId);
  // Its history as the worker's status store records it: created, running, then the autoscaler's scale.
  const store = createStatusStore(web.api.orm);
  await store.record({ deploymentId: id, status: 'pending', event: 'deployment.created', generation: 0, replicas: 0 });
  await store.record({ deploymentId: id, status: 'running', event: 'deployment.running', generation: 1, replicas: 1 });
  await store.record({ deploymentId: id, status: 'running', event: 'deployment.scaled', generation: 1, sequence: 1, replicas: 2, reason: 'requests per replica above the target' });

  await page.goto(`/deployments/${id}`);
  const timeline = page.getByTestId('timeline');
  await timeline.getByText('Scaled', { exact: true }).waitFor();
  t.deepEqual(await timelineLabels(page), ['Scaled', 'Running', 'Created'], 'the whole history, newest first');
  t.regex(await timeline.locator('li').first().innerText(), /scaled to 2 replica\(s\): requests per replica above the target/, 'the scale says to what and why');
  const status = page.getByTestId('deployment-status');
  const requested = page.getByTestId('requested');

  // Stop asks first; Cancel (focused) changes nothing.
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  const stopDialog = page.getByRole('dialog', { name: 'Stop “web-1”?' });
  await stopDialog.waitFor();
  t.regex(await stopDialog.innerText(), /endpoint stops answering/);
  t.true(await stopDialog.getByRole('button', { name: 'Cancel' }).evaluate((b) => b === document.activeElement), 'Cancel has the focus');
  await axe(t, page, 'the stop confirmation');
  await screenshot(page, 'deployment-stop-confirm', { fullPage: false });
  await stopDialog.getByRole('button', { name: 'Cancel' }).click();
  await stopDialog.waitFor({ state: 'hidden' });
  t.is(await requested.innerText(), '', 'nothing requested');
  const { rows: [row] } = await web.api.pool.query<{ running: boolean; generation: number }>('SELECT running, generation FROM deployment WHERE id = $1', [id]);
  t.deepEqual({ ...row }, { running: true, generation: 1 }, 'nothing changed');

  // Confirmed: the request shows, the button says it is working, the workflow is told.
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await stopDialog.getByRole('button', { name: 'Stop deployment' }).click();
  await stopDialog.waitFor({ state: 'hidden' });
  await requested.getByText(/Stop requested/).waitFor();
  t.true(await page.getByRole('button', { name: 'Stopping…' }).isDisabled());
  // The page says so as soon as it asks; the signal lands when the API's answer does.
  await eventually('the workflow asked to stop it', async () => (await desiredStatesSent(web.api, id)).at(-1)!.running === false);
  // The accepted request is on the timeline at once, with who asked.
  await timeline.getByText('Stop requested', { exact: true }).waitFor();
  t.true((await timeline.locator('li').first().innerText()).includes(`${user.email} stopped deployment web-1`), 'who asked');
  await screenshot(page, 'deployment-stop-requested');

  // The worker takes it down: each step arrives live.
  await store.record({ deploymentId: id, status: 'stopping', generation: 2, replicas: 2 });
  await status.getByText('stopping').waitFor();
  await timeline.getByText('Stopping', { exact: true }).waitFor();
  await store.record({ deploymentId: id, status: 'stopped', event: 'deployment.stopped', generation: 2, replicas: 0 });
  await status.getByText('stopped').waitFor();
  await timeline.locator('li').first().getByText('Stopped', { exact: true }).waitFor();
  await requested.getByText(/Stop requested/).waitFor({ state: 'hidden' });

  // Start asks nothing (it interrupts nothing).
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await requested.getByText(/Start requested/).waitFor();
  t.is(await page.getByRole('dialog').count(), 0, 'no confirmation');
  t.true(await page.getByRole('button', { name: 'Starting…' }).isDisabled());
  await eventually('the workflow asked to start it', async () => (await desiredStatesSent(web.api, id)).at(-1)!.running);
  await timeline.getByText('Start requested', { exact: true }).waitFor();
  await store.record({ deploymentId: id, status: 'deploying', generation: 3, replicas: 0 });
  await timeline.getByText('Deploying', { exact: true }).waitFor();
  await store.record({ deploymentId: id, status: 'running', event: 'deployment.running', generation: 3, replicas: 1 });
  await status.getByText('running').waitFor();
  await requested.getByText(/Start requested/).waitFor({ state: 'hidden' });

  // Restart asks first too; its rollout records no event, so the live status changes say it.
  await page.getByRole('button', { name: 'Restart', exact: true }).click();
  const restartDialog = page.getByRole('dialog', { name: 'Restart “web-1”?' });
  await restartDialog.getByRole('button', { name: 'Restart deployment' }).click();
  await restartDialog.waitFor({ state: 'hidden' });
  await requested.getByText(/Restart requested/).waitFor();
  t.true(await page.getByRole('button', { name: 'Restarting…' }).isDisabled());
  await eventually('the workflow asked to restart it', async () => (await desiredStatesSent(web.api, id)).at(-1)!.restarts === 1);
  // A restart records no lifecycle event: the request is its recorded line.
  await timeline.getByText('Restart requested', { exact: true }).waitFor();
  t.regex(await timeline.locator('li').first().innerText(), /restarted deployment web-1/);
  await store.record({ deploymentId: id, status: 'updating', generation: 4, replicas: 1 });
  await status.getByText('updating').waitFor();
  await store.record({ deploymentId: id, status: 'running', generation: 4, replicas: 1 });
  await timeline.getByText('Update finished', { exact: true }).waitFor();
  await requested.getByText(/Restart requested/).waitFor({ state: 'hidden' });
  t.true(await page.getByRole('button', { name: 'Restart', exact: true }).isEnabled(), 'ready for the next action');

  t.deepEqual(await timelineLabels(page), [
    'Update finished', 'Updating', 'Restart requested', 'Running', 'Deploying', 'Start requested', 'Stopped', 'Stopping', 'Stop requested', 'Scaled', 'Running', 'Created',
  ]);
  t.regex(await timeline.locator('li').first().innerText(), /Now running with 1 replica/);
  t.regex(await timeline.locator('li').first().innerText(), /live/, 'marked as seen live');
  await axe(t, page, 'a deployment after stop, start and restart');
  await screenshot(page, 'deployment-timeline');

  // The recorded history survives a reload; the live lines were the page's own.
  for (const [name, options] of [['dark', { ...LAPTOP, colorScheme: 'dark' as const }], ['phone', PHONE]] as const) {
    const other = await web.withSession(user, user.organizationId, options);
    await other.goto(`/deployments/${id}`);
    await other.getByTestId('timeline').getByText('Stopped', { exact: true }).waitFor();
    t.deepEqual(await timelineLabels(other), ['Restart requested', 'Running', 'Start requested', 'Stopped', 'Stop requested', 'Scaled', 'Running', 'Created'], `${name}: the recorded history`);
    await axe(t, other, `a deployment's timeline (${name})`);
    await screenshot(other, `deployment-timeline-${name}`);
  }
});

test('a viewer reads a deployment and its timeline but is offered no lifecycle control', async (t) => {
  const { user } = await userWithDeployments(web.api, 1);
  const id = await onlyDeployment(web.api, user.organizationId);
  await createStatusStore(web.api.orm).record({ deploymentId: id, status: 'running', event: 'deployment.running', generation: 1, replicas: 1 });
  const viewer = await addMember(web.api, user.organizationId, 'viewer');
  const page = await web.withSession(viewer, user.organizationId);
  const profile = page.waitForResponse((r) => r.url().includes('/v1/settings/profile') && r.ok());
  await page.goto(`/deployments/${id}`);
  await profile;
  await page.getByTestId('timeline').getByText('Running', { exact: true }).waitFor();
  await page.getByTestId('deployment-status').getByText('running').waitFor();
  for (const name of ['Stop', 'Start', 'Restart', 'Delete', 'Scale']) t.is(await page.getByRole('button', { name, exact: true }).count(), 0, `no ${name}`);
  t.is(await page.getByLabel('Replicas', { exact: true }).count(), 0, 'no scale form');
  await axe(t, page, 'a deployment seen by a viewer');
  await screenshot(page, 'deployment-viewer');
});

test('a long history shows its 20 newest events, then the older ones on asking', async (t) => {
  const { user, page } = await userWithDeployments(web.api, 1);
  const id = await onlyDeployment(web.api, user.organizationId);
  const store = createStatusStore(web.api.orm);
  await store.record({ deploymentId: id, status: 'pending', event: 'deployment.created', generation: 0, replicas: 0 });
  await store.record({ deploymentId: id, status: 'running', event: 'deployment.running', generation: 1, replicas: 1 });
  for (let sequence = 1; sequence <= 23; sequence += 1) {
    await store.record({ deploymentId: id, status: 'running', event: 'deployment.scaled', generation: 1, sequence, replicas: 1 + (sequence % 2), reason: 'the load changed' });
  }
  await page.goto(`/deployments/${id}`);
  const items = page.getByTestId('timeline').locator('li');
  await items.first().waitFor();
  t.is(await items.count(), 20, 'the newest 20');
  t.false((await timelineLabels(page)).includes('Created'), 'the oldest not yet');
  await page.getByRole('button', { name: 'Show older events' }).click();
  await page.getByTestId('timeline').getByText('Created', { exact: true }).waitFor();
  t.is(await items.count(), 25, 'every event, once');
  t.deepEqual((await timelineLabels(page)).slice(-2), ['Running', 'Created']);
  t.is(await page.getByRole('button', { name: 'Show older events' }).count(), 0, 'nothing older');
});
