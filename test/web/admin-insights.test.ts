// The administration pages that read the platform, in a real Chromium: the audit log (an organization's
// audited actions found, narrowed by organization, action, API key and time, paged), security (failed
// sign-ins, a locked account, keys never used and not rotated), analytics (the figures and the chart
// against the API's own answer, another window, an empty one, a refused one) and errors (a 500 the test
// caused, with its count and stack). An organization owner sees none of them. axe-core on each page;
// screenshots light, dark and on a phone.
// Serial: the pages show platform-wide figures, which another test of this file would move under them.
import test from 'ava';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { ADMIN_EMAIL, signupAdmin } from '../support/admin.ts';
import { createApiKey, signup, TEST_PASSWORD, validDeployment } from '../support/control-plane.ts';
import { eventually } from '../support/eventually.ts';
import { axe, checkPages, LOOKS, PHONE, startWebTest, type WebTestEnvironment } from './support/browser.ts';

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
  return web.signIn(path, options.email ?? (await signup(web.api, 'owner')).email, options.context);
}

/** The administrator's bearer for asking the API what the page should show. */
async function adminToken(): Promise<string> {
  return (await web.api.request('POST', '/v1/auth/signin', { body: { email: ADMIN_EMAIL, password: TEST_PASSWORD } })).body.access_token as string;
}

async function asAdmin(path: string) {
  const res = await web.api.request('GET', path, { token: await adminToken() });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * The audit table's rows once they satisfy `done`: a page keeps the rows it shows until the next answer
 * arrives, so a filter's effect is waited for by what the rows say.
 */
async function rowsWhen(page: Page, what: string, done: (rows: string[]) => boolean): Promise<string[]> {
  return eventually(what, async () => {
    const rows = await page.getByRole('table', { name: 'Audit records' }).locator('tbody tr').allInnerTexts();
    return done(rows) && rows;
  }, 20_000);
}

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
/** A datetime-local input's value for an instant, in the browser's time zone (the test's: same machine). */
const localInput = (time: number) => new Date(time - new Date(time).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

test.serial('audit log: an organization\'s audited actions, narrowed by organization, action, API key and time, in pages', async (t) => {
  const owner = await signup(web.api, 'audited');
  const other = await signup(web.api, 'bystander');
  await createApiKey(web.api, other.token, 'read_only');
  const keys: Awaited<ReturnType<typeof createApiKey>>[] = [];
  for (const scope of ['full_access', 'deployments_only', 'read_only'] as const) keys.push(await createApiKey(web.api, owner.token, scope));
  // Enough changes for more than one page of 25.
  for (let i = 1; i <= 24; i++) {
    const renamed = await web.api.request('PATCH', '/v1/settings/api-keys', { token: owner.token, body: { id: keys[2]!.id, name: `reader ${i}` } });
    t.is(renamed.status, 200);
  }
  // A read with an API key is audited too, in the next batch.
  t.is((await web.api.request('GET', `/v1/deployments?orgId=${owner.organizationId}`, { token: keys[0]!.key })).status, 200);
  const byKey = await eventually('the key\'s read audited', async () => {
    const body = await asAdmin(`/v1/admin/audit?apiKeyId=${keys[0]!.id}`);
    return body.data.length > 0 && body.data;
  });
  const ownerRecords = (await asAdmin(`/v1/admin/audit?organizationId=${owner.organizationId}&limit=100`)).data as { action: string; organization_id: string }[];
  t.true(ownerRecords.length > 25);

  const page = await signedIn('/', { email: ADMIN_EMAIL });
  await nav(page).getByRole('link', { name: 'Audit log' }).click();
  await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
  const table = page.getByRole('table', { name: 'Audit records' });
  await table.waitFor();
  await table.getByText(`audited org`).first().waitFor();
  await axe(t, page, 'audit log');

  // Organization: typed, applied with the keyboard.
  await page.getByLabel('Organization', { exact: true }).fill(owner.organizationId);
  await page.getByLabel('Rows per page').selectOption('25');
  await page.getByLabel('Organization', { exact: true }).press('Enter');
  await page.getByRole('heading', { name: 'Matching records' }).waitFor();
  t.is(new URL(page.url()).searchParams.get('organizationId'), owner.organizationId);
  const orgName = `audited org ${/audited-(\d+)-/.exec(owner.email)![1]}`;
  const firstPage = await rowsWhen(page, 'a page of the organization\'s records', (rows) => rows.length === 25 && rows.every((row) => row.includes(orgName)));
  t.true(firstPage[0]!.includes(ownerRecords[0]!.action), 'newest first, as the API answers');

  // The next page holds the rest; Previous comes back.
  await page.getByRole('button', { name: 'Next page' }).click();
  const secondPage = await rowsWhen(page, 'the second page', (rows) => rows.length === ownerRecords.length - 25);
  for (const row of secondPage) t.true(row.includes(orgName));
  t.true(await page.getByRole('button', { name: 'Next page' }).isDisabled(), 'the last page');
  await page.getByRole('button', { name: 'Previous page' }).click();
  await rowsWhen(page, 'the first page again', (rows) => rows.length === 25 && rows[0] === firstPage[0]);

  // Action: only the keys created.
  await page.getByLabel('Action').fill('createApiKey');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  const created = await rowsWhen(page, 'the keys created', (rows) => rows.length === 3 && rows.every((row) => row.includes('createApiKey')));
  for (const row of created) t.regex(row, /createApiKey[\s\S]*api_key[\s\S]*201/);
  t.like(Object.fromEntries(new URL(page.url()).searchParams), { organizationId: owner.organizationId, action: 'createApiKey', limit: '25' });
  await axe(t, page, 'audit log, filtered');

  // A key's link narrows to that key's requests (its read), whatever else was filtered.
  await page.goto('/admin/audit');
  await table.getByRole('link', { name: keys[0]!.id }).first().click();
  await page.waitForURL((url) => url.searchParams.get('apiKeyId') === keys[0]!.id);
  const read = await rowsWhen(page, 'the key\'s records', (rows) => rows.length === byKey.length && rows.every((row) => row.includes(keys[0]!.id)));
  t.regex(read[0]!, /listDeployments/);

  // A time range in the future matches nothing; clearing brings every record back.
  await page.getByLabel('From', { exact: true }).fill(localInput(Date.now() + 86_400_000));
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByRole('heading', { name: 'No audit record matches' }).waitFor();
  await axe(t, page, 'audit log, nothing matches');
  await page.getByRole('button', { name: 'Clear filters' }).first().click();
  await page.getByRole('heading', { name: 'All records' }).waitFor();
  await table.waitFor();
  t.is(new URL(page.url()).search, '');
  // A range that ends before it starts is refused at its field.
  await page.getByLabel('From', { exact: true }).fill(localInput(Date.now()));
  await page.getByLabel('To', { exact: true }).fill(localInput(Date.now() - 86_400_000));
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.getByRole('alert').waitFor();
  t.is(await page.getByLabel('To', { exact: true }).getAttribute('aria-invalid'), 'true', 'the bad bound is marked');
  t.regex(await page.getByRole('alert').innerText(), /must be later than from/);
});

test.serial('security: failed sign-ins, a locked account, a key never used and one not rotated for 90 days', async (t) => {
  const failing = await signup(web.api, 'typo');
  const locked = await signup(web.api, 'attacked');
  for (let i = 0; i < 2; i++) t.is((await web.api.request('POST', '/v1/auth/signin', { body: { email: failing.email, password: 'wrong password' } })).status, 401);
  const lockAfter = (await asAdmin('/v1/admin/security')).failedSignins.lockAfter as number;
  for (let i = 0; i < lockAfter; i++) await web.api.request('POST', '/v1/auth/signin', { body: { email: locked.email, password: 'wrong password' } });
  const owner = await signup(web.api, 'keys');
  const unused = await web.api.request('POST', '/v1/settings/api-keys', { token: owner.token, body: { name: 'forgotten deploy key', scope: 'deployments_only' } });
  const old = await web.api.request('POST', '/v1/settings/api-keys', { token: owner.token, body: { name: 'ancient ci key', scope: 'full_access' } });
  t.is(unused.status, 201);
  // Created 100 days ago, as a key in use since then would be.
  await web.api.pool.query(`UPDATE api_key SET created_at = now() - interval '100 days', last_used_at = now() WHERE id = $1`, [old.body.id]);

  const page = await signedIn('/', { email: ADMIN_EMAIL });
  await nav(page).getByRole('link', { name: 'Security' }).click();
  await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
  const attempts = page.getByRole('table', { name: 'Failed sign-ins' });
  const typo = attempts.getByRole('row', { name: new RegExp(failing.email) });
  await typo.waitFor();
  t.regex(await typo.innerText(), new RegExp(`2 of ${lockAfter}[\\s\\S]*Can still sign in`));
  t.regex(await attempts.getByRole('row', { name: new RegExp(locked.email) }).innerText(), new RegExp(`${lockAfter} of ${lockAfter}[\\s\\S]*Locked`));
  await page.getByRole('table', { name: 'Locked accounts' }).getByRole('row', { name: new RegExp(locked.email) }).waitFor();
  // The figures are the lists' lengths.
  const stat = (label: RegExp) => page.locator('.stat').filter({ hasText: label }).locator('.stat-value').innerText();
  t.is(Number(await stat(/Locked accounts/)), await page.getByRole('table', { name: 'Locked accounts' }).locator('tbody tr').count());
  t.is(Number(await stat(/Accounts failing sign-in/)), await attempts.locator('tbody tr').count());

  const neverUsed = page.getByRole('table', { name: 'API keys never used' }).getByRole('row', { name: /forgotten deploy key/ });
  t.regex(await neverUsed.innerText(), /keys org[\s\S]*Deployments only[\s\S]*Never/);
  const stale = page.getByRole('table', { name: 'API keys not rotated' }).getByRole('row', { name: /ancient ci key/ });
  t.regex(await stale.innerText(), /keys org[\s\S]*Full access/);
  t.false(await page.getByRole('table', { name: 'API keys not rotated' }).getByRole('row', { name: /forgotten deploy key/ }).isVisible(), 'a new key is not stale');
  await page.getByText('No service role key exists.').waitFor();
  await axe(t, page, 'security');

  // A key's audit records are a link away.
  await neverUsed.getByRole('link', { name: 'Its audit records' }).click();
  await page.waitForURL((url) => url.pathname === '/admin/audit' && url.searchParams.get('apiKeyId') === unused.body.id);
  await page.getByRole('heading', { name: 'No audit record matches' }).waitFor();
});

test.serial('analytics: the figures and the chart are the API\'s, for the last 30 days, another window, an empty one and a refused one', async (t) => {
  const owner = await signup(web.api, 'grower');
  t.is((await web.api.request('POST', '/v1/deployments', { token: owner.token, body: validDeployment('analytics-chat') })).status, 201);
  const expected = await asAdmin('/v1/admin/analytics');
  const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
  t.true(expected.totals.deploymentsByGpu[validDeployment().gpu] >= 1);

  const page = await signedIn('/', { email: ADMIN_EMAIL });
  await nav(page).getByRole('link', { name: 'Analytics' }).click();
  await page.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor();
  const stat = (label: string) => page.locator('.stat').filter({ hasText: label }).locator('.stat-value');
  await stat('Sign-ups').waitFor();
  t.is(await stat('Sign-ups').innerText(), expected.totals.signups.toLocaleString('en-US'));
  t.is(await stat('Active organizations').innerText(), expected.totals.activeOrganizations.toLocaleString('en-US'));
  t.is(await stat('Deployments created').innerText(), sum(expected.totals.deploymentsByGpu).toLocaleString('en-US'));
  const gpuRow = page.getByRole('table', { name: 'Deployments created by GPU type' }).getByRole('row', { name: new RegExp(validDeployment().gpu) });
  t.regex(await gpuRow.innerText(), new RegExp(`${validDeployment().gpu}\\s+${expected.totals.deploymentsByGpu[validDeployment().gpu]}\\s+\\d+%`));
  const chart = page.getByRole('img', { name: /^Sign-ups, active organizations and new deployments per day: sign-ups \d+/ });
  await chart.waitFor();
  await page.locator('.chart canvas').first().waitFor();

  // The days as a table, today's figures last.
  await page.getByText('The same figures as a table').click();
  const days = page.getByRole('table', { name: 'Figures per day' }).locator('tbody tr');
  t.is(await days.count(), expected.days.length);
  const today = expected.days.at(-1);
  t.regex(await days.last().innerText(), new RegExp(`${today.signups}\\s+${today.activeOrganizations}\\s+${sum(today.deploymentsByGpu)}$`));
  await axe(t, page, 'analytics');

  // Last 7 days: the API's answer for that window.
  await page.getByRole('button', { name: 'Last 7 days' }).click();
  await page.waitForURL((url) => url.searchParams.has('from'));
  const week = new URL(page.url()).searchParams;
  const weekly = await asAdmin(`/v1/admin/analytics?from=${week.get('from')}&to=${week.get('to')}`);
  t.is(weekly.days.length, 7);
  await eventually('seven days shown', async () => await days.count() === 7);
  t.is(await stat('Sign-ups').innerText(), weekly.totals.signups.toLocaleString('en-US'));
  t.is(await page.getByLabel('From', { exact: true }).inputValue(), week.get('from') ?? '');

  // A window before Kiln existed: nothing happened.
  await page.getByLabel('From', { exact: true }).fill('2020-01-01');
  await page.getByLabel('To', { exact: true }).fill('2020-01-31');
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await page.getByRole('heading', { name: 'Nothing happened in this window' }).waitFor();
  await axe(t, page, 'analytics, empty window');
  // An end before the start is refused at its field.
  await page.getByLabel('From', { exact: true }).fill('2020-02-01');
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await page.getByRole('alert').waitFor();
  t.is(await page.getByLabel('To', { exact: true }).getAttribute('aria-invalid'), 'true');
  t.regex(await page.getByRole('alert').innerText(), /must not be before from/);
});

test.serial('errors: a failure the test caused is listed with its count, last request and stack', async (t) => {
  const user = await signup(web.api, 'unlucky');
  // Breaks a table no other step of this file uses, for two requests, and mends it.
  await web.api.pool.query('ALTER TABLE webhook_subscription RENAME TO webhook_subscription_away');
  try {
    for (let i = 0; i < 2; i++) t.is((await web.api.request('GET', '/api/webhooks', { token: user.token })).status, 500);
  } finally {
    await web.api.pool.query('ALTER TABLE webhook_subscription_away RENAME TO webhook_subscription');
  }
  const issues = (await asAdmin('/v1/admin/errortracker/issues')).data as { name: string; message: string; stack: string; count: number; lastRequest: string }[];
  const caused = issues.find((i) => /webhook_subscription/.test(i.message))!;
  t.like(caused, { name: 'TableNotFoundException', count: 2 });

  const page = await signedIn('/', { email: ADMIN_EMAIL });
  await nav(page).getByRole('link', { name: 'Errors' }).click();
  await page.getByRole('heading', { name: 'Errors', level: 1 }).waitFor();
  const issue = page.getByRole('list', { name: 'Error issues' }).getByRole('listitem').filter({ hasText: 'webhook_subscription' });
  await issue.waitFor();
  t.regex(await issue.innerText(), /TableNotFoundException[\s\S]*2 times[\s\S]*GET \/api\/webhooks \(/);
  await axe(t, page, 'errors');

  // The stack opens from the keyboard.
  await issue.getByText('Stack of the latest occurrence').focus();
  await page.keyboard.press('Enter');
  const stack = issue.locator('pre');
  await stack.waitFor();
  t.is(await stack.innerText(), caused.stack);
  await axe(t, page, 'errors, a stack open');
});

test.serial('an organization owner sees no administration and is told each page is not theirs', async (t) => {
  const page = await signedIn('/');
  await page.getByRole('heading', { name: 'Welcome to Kiln' }).waitFor();
  await nav(page).getByRole('link', { name: 'Models' }).waitFor();
  t.false(await nav(page).getByRole('heading', { name: 'Administration' }).isVisible());
  for (const link of ['Audit log', 'Security', 'Analytics', 'Errors']) t.is(await nav(page).getByRole('link', { name: link, exact: true }).count(), 0, link);
  for (const [path, title] of [['/admin/audit', 'Audit log'], ['/admin/security', 'Security'], ['/admin/analytics', 'Analytics'], ['/admin/errors', 'Errors']] as const) {
    await page.goto(path);
    await page.getByRole('heading', { name: 'Not allowed', level: 1 }).waitFor();
    t.true(await page.getByText(`${title} is for platform administrators`).isVisible(), path);
    t.is(await page.getByRole('table').count(), 0, `${path} shows no data`);
  }
  await axe(t, page, 'not allowed');
});

test.serial('audit log on a phone: who, what and when show at once; the other filters fold behind a button, open when one is set', async (t) => {
  const page = await signedIn('/admin/audit', { email: ADMIN_EMAIL, context: PHONE });
  const form = page.getByRole('search', { name: 'Audit log' });
  await page.getByRole('heading', { name: 'All records' }).waitFor();
  for (const label of ['Organization', 'Action', 'From', 'To']) t.true(await form.getByLabel(label, { exact: true }).isVisible(), label);
  t.false(await form.getByLabel('User', { exact: true }).isVisible(), 'User is folded away');
  const more = form.getByRole('button', { name: 'More filters' });
  t.is(await more.getAttribute('aria-expanded'), 'false');
  await more.click();
  t.true(await form.getByLabel('User', { exact: true }).isVisible(), 'User shows once asked');
  t.is(await form.getByRole('button', { name: 'Fewer filters' }).getAttribute('aria-expanded'), 'true');
  await axe(t, page, 'audit filters unfolded on a phone');

  // A shared address with a folded filter set opens with it in view.
  await page.goto('/admin/audit?resourceType=deployment');
  await page.getByRole('heading', { name: 'Matching records' }).waitFor();
  t.is(await form.getByLabel('Resource type', { exact: true }).inputValue(), 'deployment');
  t.true(await form.getByLabel('Resource type', { exact: true }).isVisible());
});

test.serial('screenshots: audit log, security, analytics and errors, light, dark and on a phone', async (t) => {
  const pages: readonly [string, string, string][] = [
    ['admin-audit', '/admin/audit', 'All records'],
    ['admin-security', '/admin/security', 'Failed sign-ins'],
    ['admin-analytics', '/admin/analytics', 'Per day'],
    ['admin-errors', '/admin/errors', 'Issues, most recently seen first'],
  ];
  for (const [look, context] of LOOKS) {
    const page = await signedIn('/', { email: ADMIN_EMAIL, context });
    await checkPages(t, page, look, pages, { phoneTop: true });
  }
});
