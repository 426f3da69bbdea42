// What the dashboard costs the API, counted from the browser's own requests: the shell asks for what every
// page shares once (the unread count, the live socket's ticket, the profile, the organization), and each page
// then asks for at most three things of its own. A session the API rate-limits is told how long to wait at
// once: no page left loading, no price made up. The limits here are small (a burst of 200, then one call
// every 10 s) so that one test can spend a session's allowance in a second.
import test from 'ava';
import type { Page } from 'playwright-core';
import { PLANS, type Plan, type PlanLimit } from '../../catalog/plans.ts';
import { signup } from '../support/control-plane.ts';
import { startWebTest, type WebTestEnvironment } from './support/browser.ts';

const BURST = 200;
let web: WebTestEnvironment;
test.before(async () => {
  web = await startWebTest(import.meta.filename, { rateLimits: Object.fromEntries(PLANS.map((plan) => [plan, { perMinute: 6, burst: BURST }])) as Record<Plan, PlanLimit> });
});
test.after.always(async () => {
  await web?.close();
});

/** Every call `page` makes to the API from now on, as "METHOD /path" (the query left off). */
function recordCalls(page: Page): string[] {
  const calls: string[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (/^\/(v1|api)\//.test(url.pathname)) calls.push(`${request.method()} ${url.pathname}`);
  });
  return calls;
}

/** Waits until the page has asked nothing for half a second (its loads done, the live socket open). */
async function settled(page: Page, calls: string[]): Promise<void> {
  await page.waitForLoadState('networkidle');
  for (let seen = -1; seen !== calls.length;) {
    seen = calls.length;
    await page.waitForTimeout(500);
  }
}

const PAGES = [
  ['Deployments', '/deployments'], ['Models', '/models'], ['Templates', '/templates'], ['Alerts', '/alerts'], ['Budgets', '/budgets'],
  ['API keys', '/settings/api-keys'], ['Team', '/team'], ['Billing', '/billing'], ['Notifications', '/notifications'],
  ['Profile and organization', '/settings/general'], ['Home', '/'],
] as const;

test('the shell asks for what pages share once, and each page asks for at most three things of its own', async (t) => {
  const user = await signup(web.api, 'costs');
  // A deployment watched by an alert rule and a budget: their lists name it without asking for the deployments.
  const created = await web.api.request('POST', '/v1/deployments', { token: user.token, body: { name: 'watched', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' } });
  t.is(created.status, 201);
  const deploymentId = created.body.id as string;
  t.is((await web.api.request('POST', '/v1/alerts', { token: user.token, body: { name: 'slow', metric: 'latency', threshold: 2, deploymentId } })).status, 201);
  t.is((await web.api.request('POST', '/v1/cost-controls/alerts', { token: user.token, body: { name: 'cap', limitCents: 5000, period: 'month', deploymentId } })).status, 201);

  const page = await web.withSession(user);
  const calls = recordCalls(page);
  await page.goto('/');
  await page.getByRole('heading', { level: 1 }).waitFor();
  await settled(page, calls);
  const shell = ['GET /v1/notifications', 'POST /v1/ws/tickets', 'GET /v1/settings/profile', 'GET /v1/settings/organization'];
  for (const call of shell) t.is(calls.filter((c) => c === call).length, 1, `the first load asks ${call} once`);
  t.true(calls.length <= shell.length + 3, `the first load of Home: ${calls.join(', ')}`);

  const costs: Record<string, string[]> = {};
  for (const [title, path] of PAGES) {
    calls.length = 0;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: title, exact: true }).click();
    await page.waitForURL((url) => url.pathname === path);
    await settled(page, calls);
    costs[title] = [...calls];
  }
  for (const [title] of PAGES) t.true(costs[title]!.length <= 3, `${title} asked ${costs[title]!.length}: ${costs[title]!.join(', ')}`);
  t.log(Object.entries(costs).map(([title, c]) => `${title} ${c.length}`).join(', '));

  // The lists name the watched deployment.
  await page.goto('/alerts');
  await page.getByRole('row', { name: /slow/ }).getByText('watched').waitFor();
  await page.goto('/budgets');
  await page.getByRole('row', { name: /cap/ }).getByText('watched').waitFor();
});

test('a rate-limited session is told how long to wait at once, and no price is made up', async (t) => {
  const user = await signup(web.api, 'limited');
  // The session's management allowance spent, as a script polling with the same sign-in would.
  let status = 200;
  for (let i = 0; i <= BURST && status !== 429; i++) status = (await web.api.request('GET', '/api/deployments', { token: user.token })).status;
  t.is(status, 429);

  const page = await web.withSession(user);
  const opened = Date.now();
  await page.goto('/deployments/new');
  const banner = page.getByRole('alert').filter({ hasText: 'try again in' }).first();
  await banner.waitFor();
  t.true(Date.now() - opened < 15_000, 'told within seconds, not after the client has retried for half a minute');
  t.regex(await banner.innerText(), /Too many requests from this sign-in: try again in \d+ seconds?\./);
  // Nothing keeps loading, and the GPU choice shows no price rather than $0.00.
  await page.waitForFunction(() => !document.querySelector('.loading-rows, .skeleton'));
  const gpu = await page.getByLabel('GPU type').locator('option').allInnerTexts();
  t.false(gpu.some((label) => label.includes('$0.00')), gpu.join(' | '));
  t.true(gpu.some((label) => label.includes('price unavailable')), gpu.join(' | '));
});
