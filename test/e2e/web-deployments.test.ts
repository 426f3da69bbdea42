// The dashboard's deployment pages end to end, in a real Chromium against Kiln running as processes (the API
// serving the dashboard's build, the worker, the local GPU cluster with simulated model servers): sign up,
// create an API key, deploy from a template after its dry run, watch it reach running without reloading,
// chat with it in the playground (the answer streams in), scale it to 2, see its metrics and cost, delete it
// after confirming, and see it leave the list. axe-core checks each page; screenshots of each.
import anyTest, { type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import { axe, launchBrowser, LAPTOP, PHONE, screenshot, webDistForTests, type LaunchedBrowser } from '../web/support/browser.ts';
import { startKiln, type Kiln } from '../support/kiln.ts';
import { eventually } from '../support/eventually.ts';

interface Context { kiln: Kiln; browser: LaunchedBrowser }
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  // The API process serves the build as `npm start` would (KILN_WEB_DIST, which startKiln passes on).
  process.env.KILN_WEB_DIST = await webDistForTests();
  // Two L4s: the deployment scales to 2 replicas of one GPU each.
  const kiln = await startKiln(import.meta.filename, { nodePools: [{ gpuType: 'nvidia-l4', nodes: 2, gpusPerNode: 1 }] });
  t.context = { kiln } as Context; // stopped by the after hook even if the rest of this set-up fails
  t.context = { kiln, browser: await launchBrowser(kiln.url()) };
});
test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.kiln?.stop();
});

const stamp = `${Date.now()}`.slice(-6);
const user = { name: 'Dana Deployer', organization: `Deployers ${stamp}`, email: `dana-${stamp}@example.com`, password: 'correct horse battery staple' };

async function signUp(page: Page, kiln: Kiln) {
  await page.goto('/settings/api-keys');
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByLabel('Your name').fill(user.name);
  await page.getByLabel('Organization').fill(user.organization);
  await page.getByLabel('E-mail').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  // The growth plan's rate limits, as an operator would set them: the pages poll metrics while open.
  const organizationId = await page.evaluate(() => (JSON.parse(localStorage.getItem('kiln.session') ?? '{}') as { organizationId: string }).organizationId);
  await kiln.setPlan(organizationId, 'growth');
}

test.serial('sign up, key, deploy from a template, running live, chat, scale to 2, metrics and cost, delete', async (t) => {
  const { kiln, browser } = t.context;
  const page = await browser.page(LAPTOP);

  await signUp(page, kiln);
  await page.getByLabel('Name').fill('laptop');
  await page.getByRole('button', { name: 'Create key' }).click();
  t.regex(await page.getByTestId('new-key-value').innerText(), /\S{20,}/, 'the new key is shown once');

  // The list, empty, says what to do.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Deployments' }).click();
  await page.getByRole('heading', { name: 'No deployments yet' }).waitFor();
  await axe(t, page, 'deployments (empty)');

  // New: a template, its dry run (checks, plan, cost), then deploy.
  await page.getByRole('link', { name: 'New deployment' }).first().click();
  await page.getByRole('heading', { name: 'New deployment', level: 1 }).waitFor();
  await page.getByRole('button', { name: /Llama 3\.1 8B Instruct on NVIDIA L4/ }).click();
  await page.getByLabel('Name').fill('web-chat');
  await axe(t, page, 'new deployment');
  await page.getByRole('button', { name: 'Check and price it' }).click();
  const checks = page.getByRole('list', { name: 'Checks' });
  await checks.waitFor({ timeout: 120_000 });
  t.regex(await checks.innerText(), /✓ model fit/);
  t.notRegex(await checks.innerText(), /✗/, 'every check passes');
  t.regex(await page.getByTestId('dry-run-hourly').innerText(), /^\$\d+\.\d\d$/);
  t.is(await page.getByTestId('dry-run-fit').innerText(), 'now (1 of 1 replicas)');
  t.regex(await page.getByRole('list', { name: 'Planned resources' }).innerText(), /kubernetes:apps\/v1:Deployment/);
  await screenshot(page, 'deployments-new');
  await page.getByRole('button', { name: 'Deploy', exact: true }).click();

  // Its page follows the lifecycle on the socket: no reload between pending and running.
  await page.waitForURL(/\/deployments\/dep_\w+$/);
  const id = page.url().split('/').pop()!;
  await page.evaluate(() => { (window as unknown as { stayed: boolean }).stayed = true; });
  await page.getByTestId('deployment-status').getByText('running').waitFor({ timeout: 240_000 });
  t.true(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed === true), 'the page was not reloaded');
  t.regex(await page.getByTestId('timeline').innerText(), /running/);

  // The playground streams the model's answer.
  await page.getByLabel('Message').fill('Say hello in five words.');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForFunction(() => (document.querySelector('[data-testid="playground-answer"]')?.textContent ?? '').trim().length > 0
    && !document.querySelector('[data-testid="playground-answer"] .muted'), undefined, { timeout: 60_000 });
  t.true((await page.getByTestId('playground-answer').innerText()).trim().length > 0, 'an answer appeared');

  // Logs follow: the chat's access line arrives.
  await page.getByTestId('logs').getByText(/POST \/v1\/chat\/completions/).first().waitFor({ timeout: 60_000 });

  // Scale to 2 (beyond the template's maximum of 1: the maximum rises with it), seen live.
  await page.getByLabel('Replicas', { exact: true }).fill('2');
  await page.getByRole('button', { name: 'Scale', exact: true }).click();
  await page.getByTestId('deployment-replicas').getByText('2 running of 2').waitFor({ timeout: 180_000 });

  // Metrics and cost.
  await page.getByTestId('charts').getByRole('img', { name: /Requests per second/ }).waitFor({ timeout: 60_000 });
  t.is(await page.getByTestId('charts').locator('canvas').count(), 4, 'four charts drawn');
  await page.getByTestId('cost-hourly').waitFor();
  t.regex(await page.getByTestId('cost-hourly').innerText(), /^\$\d+\.\d\d$/);
  await axe(t, page, 'deployment detail');
  await screenshot(page, 'deployments-detail');

  // The list shows it with its live status and cost.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Deployments' }).click();
  const row = page.getByRole('row', { name: /web-chat/ });
  await row.waitFor();
  t.regex(await row.innerText(), /running/);
  t.regex(await row.innerText(), /2\/2/);
  t.regex(await row.innerText(), /\$\d+\.\d\d/);
  await axe(t, page, 'deployments list');
  await screenshot(page, 'deployments-list');

  // Dark mode and a phone, for the screenshots and axe's contrast checks.
  const dark = await browser.page({ ...LAPTOP, colorScheme: 'dark' });
  await copySession(page, dark);
  await dark.goto('/deployments');
  await dark.getByRole('row', { name: /web-chat/ }).waitFor();
  await axe(t, dark, 'deployments list (dark)');
  await screenshot(dark, 'deployments-list-dark');
  await dark.goto(`/deployments/${id}`);
  await dark.getByTestId('charts').getByRole('img', { name: /Requests per second/ }).waitFor({ timeout: 60_000 });
  await axe(t, dark, 'deployment detail (dark)');
  await screenshot(dark, 'deployments-detail-dark');
  await dark.goto('/deployments/new');
  // The name follows what is chosen until the user types one; a typed name stays.
  const nameField = dark.getByLabel('Name');
  const llama = dark.getByRole('button', { name: /Llama 3\.1 8B Instruct on NVIDIA L4/ });
  await llama.click();
  // This cluster has L4 nodes alone: a template on T4 is shown as one that cannot run, and cannot be chosen.
  const onT4 = dark.getByRole('button', { name: /nvidia-t4 · no GPU cluster offers it now/ }).first();
  t.true(await onT4.isDisabled());
  t.is(await nameField.inputValue(), 'llama-3-1-8b-instruct');
  await dark.getByRole('button', { name: 'Search models' }).click();
  await dark.getByLabel('Search the model catalog').fill('qwen');
  await dark.getByRole('list', { name: 'Models' }).getByRole('button', { name: /^Qwen2\.5 0\.5B Instruct/ }).click();
  await eventually('the name following the model', async () => (await nameField.inputValue()) === 'qwen2-5-0-5b-instruct');
  await nameField.fill('mine');
  await dark.getByRole('button', { name: 'From a template' }).click();
  await llama.click();
  t.is(await nameField.inputValue(), 'mine');
  await screenshot(dark, 'deployments-new-dark');
  const phone = await browser.page(PHONE);
  await copySession(page, phone);
  await phone.goto('/deployments');
  await phone.getByRole('row', { name: /web-chat/ }).waitFor();
  await axe(t, phone, 'deployments list (phone)');
  await screenshot(phone, 'deployments-list-phone');

  // Delete after confirming: it leaves the list.
  await page.getByRole('link', { name: 'web-chat' }).click();
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: /Delete “web-chat”/ });
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Delete deployment' }).click();
  await page.waitForURL(/\/deployments$/);
  await page.getByRole('row', { name: /web-chat/ }).waitFor({ state: 'detached', timeout: 180_000 });
  await page.getByRole('heading', { name: 'No deployments yet' }).waitFor({ timeout: 180_000 });
  const left = await kiln.request('GET', `/api/deployments/${id}`, {
    token: await page.evaluate(() => (JSON.parse(localStorage.getItem('kiln.session') ?? '{}') as { accessToken: string }).accessToken),
  });
  t.true(left.status === 404 || ['deleting', 'deleted'].includes(left.body?.data?.status), `deleted: ${left.status}`);
});

/** The same signed-in user in another context (dark mode, a phone): the session lives in localStorage. */
async function copySession(from: Page, to: Page) {
  const session = await from.evaluate(() => localStorage.getItem('kiln.session'));
  await to.goto('/sign-in');
  await to.evaluate((value) => localStorage.setItem('kiln.session', value ?? ''), session);
}
