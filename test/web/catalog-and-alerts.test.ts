// The catalog, alerts and administration pages in a real Chromium: models searched and one opened, a
// template starred (and still starred after a reload), one of the organization's deleted after confirming,
// an alert rule refused at its field then created and deleted after confirming, a budget created, edited and
// deleted; a platform administrator's pages (an open circuit reset), and
// a normal user who neither sees them nor may open them. axe-core on each page; screenshots light, dark and
// on a phone.
import test from 'ava';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { createCircuitService } from '../../control-plane/recovery/circuits.ts';
import { ADMIN_EMAIL, signupAdmin } from '../support/admin.ts';
import { signup, TEST_PASSWORD } from '../support/control-plane.ts';
import { axe, checkPages, LOOKS, screenshot, startWebTest, type WebTestEnvironment } from './support/browser.ts';

let web: WebTestEnvironment;
test.before(async () => {
  web = await startWebTest(import.meta.filename);
  await signupAdmin(web.api);
});
test.after.always(async () => {
  await web?.close();
});

/** Signs in through the form and lands on `path`. */
async function signedIn(path: string, options: { email?: string; context?: BrowserContextOptions } = {}): Promise<Page> {
  return web.signIn(path, options.email ?? (await signup(web.api, 'catalog')).email, options.context);
}

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

test('models: search with filters, open one, see where it runs and what it costs, and a Deploy link', async (t) => {
  const page = await signedIn('/models');
  await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
  await page.getByRole('table', { name: 'Models' }).waitFor();
  await axe(t, page, 'models');

  await page.getByLabel('Search').fill('llama 3.1 8b');
  await page.getByLabel('Task').selectOption('chat');
  await page.getByLabel('Fits on').selectOption('nvidia-l4');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('heading', { name: 'Matching models' }).waitFor();
  const link = page.getByRole('link', { name: 'Llama 3.1 8B Instruct', exact: true });
  await link.waitFor();
  t.regex(page.url(), /q=llama/);
  const rows = await page.getByRole('table', { name: 'Models' }).locator('tbody tr').allInnerTexts();
  t.true(rows.length > 0);
  for (const row of rows) t.regex(row, /Chat/, 'only chat models');
  t.is(await page.getByRole('link', { name: 'Llama 3.1 8B', exact: true }).count(), 0, 'the completion model is filtered out');

  // A filter nothing matches says so and offers to clear.
  await page.getByLabel('Search').fill('no-such-model-anywhere');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('heading', { name: 'No model matches' }).waitFor();
  await page.getByRole('button', { name: 'Clear filters' }).first().click();
  await page.getByRole('heading', { name: 'All models' }).waitFor();

  await page.getByLabel('Search').fill('llama 3.1 8b instruct');
  await page.getByRole('button', { name: 'Search' }).click();
  await link.click();
  await page.getByRole('heading', { name: 'Llama 3.1 8B Instruct', level: 1 }).waitFor();
  const facts = await page.getByRole('region', { name: 'Facts' }).innerText();
  t.regex(facts, /8B/);
  t.regex(facts, /LlamaForCausalLM/);
  const hardware = page.getByRole('table', { name: 'GPU types that hold the model' });
  await hardware.waitFor();
  const l4 = await hardware.getByRole('row', { name: /L4/ }).first().innerText();
  t.regex(l4, /\$\d+\.\d\d/, 'an hourly price');
  t.regex(l4, /\d+–\d+/, 'a speed band');
  t.is(await page.getByRole('link', { name: 'Deploy', exact: true }).getAttribute('href'), '/deployments/new?model=meta-llama%2FLlama-3.1-8B-Instruct');
  t.false(await page.getByRole('button', { name: 'Remove model' }).isVisible(), 'a catalog model is read-only');
  await axe(t, page, 'a model');
});

test('your organization\'s model: edit its name and defaults, refused removal while a deployment uses it (409 said), removed after confirming', async (t) => {
  const account = await signup(web.api, 'registry');
  const model = 'pvc://model-store/llama-ft';
  const validated = await web.api.request('POST', `/v1/models/${encodeURIComponent(model)}/validate`, { token: account.token, body: { gpu: 'nvidia-l4' } });
  t.is(validated.status, 200);
  // A deployment running that model, written directly: what matters is what the page says of the registry's 409.
  await web.api.pool.query(
    `insert into deployment (id, created_at, organization_id, name, model, runtime, gpu, status, endpoint, replicas, min_replicas, max_replicas, current_replicas, updated_at)
     values ($1, now(), $2, 'ft-chat', $3, 'vllm', 'nvidia-l4', 'running', 'https://e', 1, 1, 1, 1, now())`,
    [`dep_web${account.organizationId.slice(4, 21)}`, account.organizationId, model],
  );
  const page = await signedIn('/models?q=llama-ft', { email: account.email });
  const row = page.getByRole('table', { name: 'Models' }).getByRole('row', { name: /llama-ft/ });
  await row.getByText('Your organization').waitFor();
  await row.getByRole('link').click();
  await page.getByRole('heading', { name: 'Your organization\'s settings' }).waitFor();
  await axe(t, page, 'your model');

  await page.getByLabel('Display name').fill('Llama fine-tuned');
  await page.getByLabel('Default vLLM arguments').fill('--enable-prefix-caching');
  await page.getByLabel('Default context length').fill('0');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.locator('.field-error').first().waitFor();
  t.is(await page.getByLabel('Default context length').getAttribute('aria-invalid'), 'true');
  await page.getByLabel('Default context length').fill('8192');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('heading', { name: 'Llama fine-tuned', level: 1 }).waitFor();
  t.regex(await page.getByRole('region', { name: 'Facts' }).innerText(), /8192 tokens[\s\S]*--enable-prefix-caching/);

  await page.getByRole('button', { name: 'Remove model' }).click();
  const dialog = page.getByRole('dialog', { name: 'Remove “Llama fine-tuned”?' });
  await dialog.getByRole('button', { name: 'Remove model' }).click();
  await dialog.getByRole('alert').getByText(/used by 1 deployment\(s\) \(ft-chat\)/).waitFor();
  t.regex(await dialog.getByRole('alert').innerText(), /Stop using it first/);
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  await web.api.pool.query('update deployment set delete_requested = true where organization_id = $1', [account.organizationId]);
  await page.getByRole('button', { name: 'Remove model' }).click();
  await dialog.getByRole('button', { name: 'Remove model' }).click();
  await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
  await page.getByText('“Llama fine-tuned” removed from your models').waitFor();
});

test('templates: star one and it is still starred after a reload; its page lists versions; a new template gets a version 2, then is deleted after confirming', async (t) => {
  const page = await signedIn('/templates');
  const table = page.getByRole('table', { name: 'Templates' });
  await table.waitFor();
  await axe(t, page, 'templates');
  const star = table.getByRole('button', { name: /^Star Llama 3\.1 8B Instruct/ }).first();
  const name = (await star.getAttribute('aria-label'))!.replace(/^Star /, '');
  t.is(await star.getAttribute('aria-pressed'), 'false');
  await star.click();
  const starred = page.getByRole('button', { name: `Star ${name}`, pressed: true });
  await starred.waitFor();
  await page.reload();
  await starred.waitFor();
  t.regex(await starred.innerText(), /★\s*1/);

  // Its page: what it deploys, its versions, and Deploy.
  await table.getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { name, level: 1 }).waitFor();
  await page.getByRole('table', { name: 'Versions' }).getByRole('row', { name: /v1/ }).waitFor();
  t.regex(await page.getByRole('link', { name: 'Deploy', exact: true }).getAttribute('href') ?? '', /^\/deployments\/new\?template=preset_/);
  t.false(await page.getByRole('button', { name: 'New version' }).isVisible(), 'a catalog preset has no versions of yours');
  await axe(t, page, 'a template');

  // A template of one's own, then a second version of it.
  await page.goto('/templates');
  await page.getByRole('button', { name: 'New template' }).click();
  await page.getByLabel('Name').fill('chat on l4');
  await page.getByLabel('Model').fill('meta-llama/Llama-3.1-8B-Instruct');
  await page.getByLabel('GPU type').selectOption('nvidia-l4');
  await page.getByRole('button', { name: 'Create template' }).click();
  await page.getByRole('heading', { name: 'chat on l4', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'New version' }).click();
  await page.getByLabel('Replicas', { exact: true }).fill('2');
  await page.getByRole('button', { name: 'Save version' }).click();
  await page.getByRole('alert').getByText(/replicas \(2\) must lie between/).waitFor();
  await page.getByLabel('Maximum replicas').fill('3');
  await page.getByLabel('Notes').fill('two replicas for the launch');
  await page.getByRole('button', { name: 'Save version' }).click();
  await page.getByRole('table', { name: 'Versions' }).getByRole('row', { name: /v2.*two replicas for the launch/ }).waitFor();
  t.regex(await page.getByRole('heading', { name: /^Version 2/ }).innerText(), /Version 2/);

  // Deleted after confirming (cancelling first keeps it), back to the list without it.
  const url = page.url();
  await page.getByRole('button', { name: 'Delete template' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete the template “chat on l4”?' });
  await dialog.getByText('Its 2 versions go with it').waitFor();
  await axe(t, page, 'delete template dialog');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  t.is(page.url(), url, 'cancelling stays on the template');
  await page.getByRole('button', { name: 'Delete template' }).click();
  await dialog.getByRole('button', { name: 'Delete template' }).click();
  await page.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
  await page.getByText('Template “chat on l4” deleted').waitFor();
  await table.waitFor();
  t.is(await table.getByRole('link', { name: 'chat on l4', exact: true }).count(), 0);
});

test('alerts: a bad threshold is refused at its field, a good rule is created, then deleted after confirming', async (t) => {
  const page = await signedIn('/alerts');
  await page.getByRole('heading', { name: 'No alert rules yet' }).waitFor();
  await axe(t, page, 'alerts, empty');
  await page.getByRole('button', { name: 'New alert rule' }).click();
  await page.getByLabel('Name').fill('too many errors');
  await page.getByLabel('Metric').selectOption('error_rate');
  const threshold = page.getByLabel('Threshold');
  await threshold.fill('5');
  await page.getByRole('button', { name: 'Create rule' }).click();
  await page.locator('.field-error').first().waitFor();
  t.is(await threshold.getAttribute('aria-invalid'), 'true');
  const described = await threshold.evaluate((input) => input.getAttribute('aria-describedby')?.split(' ').map((id) => document.getElementById(id)?.textContent).join(' '));
  t.regex(described ?? '', /ratio from 0 to 1/, 'the error is said at the field');
  await axe(t, page, 'alert rule with a field error');

  await threshold.fill('0.05');
  await page.getByRole('button', { name: 'Create rule' }).click();
  const row = page.getByRole('table', { name: 'Alert rules' }).getByRole('row', { name: /too many errors/ });
  await row.waitFor();
  t.regex(await row.innerText(), /Error rate[\s\S]*above 0\.05/);

  await page.getByRole('button', { name: 'Delete too many errors' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete the rule “too many errors”?' });
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  t.true(await row.isVisible(), 'cancelling keeps it');
  await page.getByRole('button', { name: 'Delete too many errors' }).click();
  await dialog.getByRole('button', { name: 'Delete rule' }).click();
  await page.getByRole('heading', { name: 'No alert rules yet' }).waitFor();
});

test('alerts fired: one raised by hand is acknowledged, silenced for an hour and resolved', async (t) => {
  const account = await signup(web.api, 'on-call');
  const raised = await web.api.request('POST', '/v1/monitoring/alerts', { token: account.token, body: { name: 'provider maintenance', message: 'The L4 pool is being drained' } });
  t.is(raised.status, 201);
  const page = await signedIn('/alerts', { email: account.email });
  const row = page.getByRole('table', { name: 'Alerts fired' }).getByRole('row', { name: /provider maintenance/ });
  await row.getByText('The L4 pool is being drained').waitFor();
  t.regex(await row.innerText(), /firing/);
  await page.getByRole('button', { name: 'Acknowledge provider maintenance' }).click();
  await row.getByText('firing, acknowledged').waitFor();
  await page.getByRole('button', { name: 'Silence provider maintenance for an hour' }).click();
  await row.getByText('firing, acknowledged, silenced').waitFor();
  await axe(t, page, 'alerts with one firing');
  await page.getByRole('button', { name: 'Resolve provider maintenance' }).click();
  await row.getByText(/^resolved/).waitFor();
  const listed = await web.api.request('GET', `/v1/monitoring/alerts?orgId=${account.organizationId}`, { token: account.token });
  t.like(listed.body[0], { name: 'provider maintenance', state: 'resolved' });
  t.truthy(listed.body[0].acknowledgedAt);
});

test('budgets: a monthly limit that refuses new deployments when reached, edited in its prefilled form (a bad limit refused at its field), then deleted after confirming', async (t) => {
  const page = await signedIn('/budgets');
  await page.getByRole('heading', { name: 'No budgets yet' }).waitFor();
  await axe(t, page, 'budgets, empty');
  await page.getByLabel('Name').fill('monthly gpus');
  await page.getByRole('button', { name: 'Create budget' }).click();
  await page.locator('.field-error').first().waitFor();
  t.is(await page.getByLabel('Limit (US dollars)').getAttribute('aria-invalid'), 'true', 'a budget needs its limit');
  await page.getByLabel('Limit (US dollars)').fill('250');
  await page.getByLabel('Period', { exact: true }).selectOption('month');
  await page.getByRole('radio', { name: /Refuse new deployments/ }).check();
  await page.getByRole('button', { name: 'Create budget' }).click();
  const row = page.getByRole('table', { name: 'Budgets' }).getByRole('row', { name: /monthly gpus/ });
  await row.waitFor();
  t.regex(await row.innerText(), /\$250\.00 a month[\s\S]*Refuses new deployments/);
  await axe(t, page, 'budgets');

  // Edited: the form holds its values; a limit of nothing is refused at its field, then a new one saved.
  await page.getByRole('button', { name: 'Edit monthly gpus' }).click();
  const form = page.getByRole('region', { name: 'Edit “monthly gpus”' });
  t.is(await form.getByLabel('Name').inputValue(), 'monthly gpus');
  t.is(await form.getByLabel('Limit (US dollars)').inputValue(), '250');
  t.true(await form.getByRole('radio', { name: /Refuse new deployments/ }).isChecked());
  await form.getByLabel('Limit (US dollars)').fill('0');
  await form.getByRole('button', { name: 'Save budget' }).click();
  await form.locator('.field-error').first().waitFor();
  t.is(await form.getByLabel('Limit (US dollars)').getAttribute('aria-invalid'), 'true');
  await axe(t, page, 'budget edited, with a field error');
  await form.getByLabel('Limit (US dollars)').fill('400');
  await form.getByLabel('Period', { exact: true }).selectOption('day');
  await form.getByRole('radio', { name: /Stop the deployments/ }).check();
  await form.getByRole('button', { name: 'Save budget' }).click();
  await form.waitFor({ state: 'detached' });
  await row.getByText('$400.00 a day').waitFor();
  t.regex(await row.innerText(), /Stops deployments/);
  await page.getByRole('heading', { name: 'New budget' }).waitFor();

  // Deleted after confirming.
  await page.getByRole('button', { name: 'Delete monthly gpus' }).click();
  await page.getByRole('dialog', { name: 'Delete the budget “monthly gpus”?' }).getByRole('button', { name: 'Delete budget' }).click();
  await page.getByRole('heading', { name: 'No budgets yet' }).waitFor();
});

test('a platform administrator sees the administration pages and resets an open circuit', async (t) => {
  const circuits = createCircuitService();
  for (let i = 1; i <= 5; i++) await circuits.recordFailure(web.api.orm.em.fork(), { provider: 'kubernetes', gpuType: 'nvidia-a10g' }, `pulumi up failed (${i})`);
  const page = await signedIn('/', { email: ADMIN_EMAIL });
  await nav(page).getByRole('heading', { name: 'Administration' }).waitFor();
  await nav(page).getByRole('link', { name: 'Operations' }).click();
  const circuitsTable = page.getByRole('table', { name: 'Open circuits' });
  const open = circuitsTable.getByRole('row', { name: /kubernetes.*nvidia-a10g/ });
  await open.waitFor();
  t.regex(await open.innerText(), /pulumi up failed \(5\)/);
  await axe(t, page, 'admin operations');
  await page.getByRole('button', { name: 'Reset kubernetes nvidia-a10g' }).click();
  const dialog = page.getByRole('dialog', { name: /Reset the circuit/ });
  await dialog.getByRole('button', { name: 'Reset circuit' }).click();
  await page.getByText('No circuit is open').waitFor();
  const after = await web.api.request('GET', '/v1/admin/operations', { token: (await web.api.request('POST', '/v1/auth/signin', { body: { email: ADMIN_EMAIL, password: TEST_PASSWORD } })).body.access_token });
  t.deepEqual(after.body.openCircuits, []);

  for (const [link, heading] of [['Organizations', 'Organizations'], ['Revenue', 'Revenue'], ['Feature flags', 'Feature flags'], ['Announcements', 'Announcements']] as const) {
    await nav(page).getByRole('link', { name: link }).click();
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Loading' }).waitFor({ state: 'detached' }).catch(() => undefined);
    await axe(t, page, `admin ${link}`);
  }
  await nav(page).getByRole('link', { name: 'Organizations' }).click();
  await page.getByRole('table', { name: 'Organizations' }).getByText('Kiln operations').waitFor();
});

test('a normal user sees no administration in the navigation and gets a clear "not allowed" page by address', async (t) => {
  const page = await signedIn('/');
  await nav(page).getByRole('link', { name: 'Models' }).waitFor();
  await page.getByRole('heading', { name: 'Welcome to Kiln' }).waitFor();
  await page.goto('/admin');
  await page.getByRole('heading', { name: 'Not allowed', level: 1 }).waitFor();
  t.true(await page.getByText('Operations is for platform administrators').isVisible());
  // The page asked the API the same question the navigation did: the answer is in.
  t.false(await nav(page).getByRole('heading', { name: 'Administration' }).isVisible());
  t.is(await nav(page).getByRole('link', { name: 'Feature flags' }).count(), 0);
  await axe(t, page, 'not allowed');
  await screenshot(page, 'admin-not-allowed');
});

test('screenshots: models, a model, templates, alerts, budgets and operations, light, dark and on a phone', async (t) => {
  // Something on each page: a rule, an alert raised by hand, a budget.
  const token = (await web.api.request('POST', '/v1/auth/signin', { body: { email: ADMIN_EMAIL, password: TEST_PASSWORD } })).body.access_token as string;
  t.is((await web.api.request('POST', '/v1/alerts', { token, body: { name: 'chat p95 latency', metric: 'latency', threshold: 2, quantile: 'p95', forSeconds: 300 } })).status, 201);
  t.is((await web.api.request('POST', '/v1/monitoring/alerts', { token, body: { name: 'provider maintenance', message: 'The L4 pool is being drained' } })).status, 201);
  t.is((await web.api.request('POST', '/v1/cost-controls/alerts', { token, body: { name: 'monthly spend', limitCents: 50_000, period: 'month' } })).status, 201);
  const pages: readonly [string, string, string][] = [
    ['models', '/models', 'All models'],
    ['model', `/models/${encodeURIComponent('meta-llama/Llama-3.1-8B-Instruct')}`, 'Where it runs'],
    ['templates', '/templates', 'Templates you can deploy'],
    ['alerts', '/alerts', 'Where alerts go'],
    ['budgets', '/budgets', 'Your budgets'],
    ['admin', '/admin', 'Open circuits'],
  ];
  for (const [look, context] of LOOKS) {
    const page = await signedIn('/', { email: ADMIN_EMAIL, context });
    await checkPages(t, page, look, pages);
  }
});
