// The documentation site's API reference (/docs/api) in a real Chromium, served by a test API from the real
// build: the operations of the document Kiln serves, one surface at a time, and a request tried from the page
// with a signed-up user's API key, its answer shown.
import test from 'ava';
import type { Page } from 'playwright-core';
import { docsDistForTests } from '../support/docs-site.ts';
import { createApiKey, signupWithDeployment, startTestApi, type TestApi } from '../support/control-plane.ts';
import { launchBrowser, screenshot, type LaunchedBrowser } from './support/browser.ts';

let api: TestApi;
let browser: LaunchedBrowser;
test.before(async () => {
  api = await startTestApi(import.meta.filename, { config: { docsDist: await docsDistForTests() } });
  browser = await launchBrowser(api.url);
});
test.after.always(async () => {
  await browser?.close();
  await api?.close();
});

/** An operation's block in Swagger UI, by method and exact path. */
const operation = (page: Page, method: string, path: string) =>
  page.locator(`.opblock-${method.toLowerCase()}`).filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });

test('the API reference shows the served operations of each surface and tries a request with the reader\'s token', async (t) => {
  const user = await signupWithDeployment(api);
  const { key } = await createApiKey(api, user.token, 'read_only');
  const page = await browser.page();
  const refused: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) refused.push(message.text());
  });

  // A link to an operation (Swagger UI draws long lists as they scroll into view): it opens, beside its tag's others.
  await page.goto('/docs/api#/Deployments/listDeployments');
  await page.getByRole('heading', { name: 'API reference', level: 1 }).waitFor();
  const list = operation(page, 'GET', '/api/deployments');
  await list.getByRole('button', { name: 'Execute' }).waitFor();
  await operation(page, 'POST', '/api/deployments').waitFor();
  t.is(await page.locator('.opblock-summary-path[data-path^="/v1/"]').count(), 0, 'the platform API alone');

  // Without a token Kiln refuses the request; with the reader's API key it answers with the deployments.
  const status = list.locator('.live-responses-table tr.response .response-col_status');
  await list.getByRole('button', { name: 'Execute' }).click();
  await status.filter({ hasText: '401' }).waitFor();
  await page.getByLabel('Bearer token').fill(key);
  await list.getByRole('button', { name: 'Clear' }).click();
  await list.getByRole('button', { name: 'Execute' }).click();
  await status.filter({ hasText: '200' }).waitFor();
  t.regex(await list.locator('.live-responses-table tr.response .response-col_description').innerText(), /"name": "llama-chat"/);
  await list.locator('.live-responses-table').scrollIntoViewIfNeeded();
  await screenshot(page, 'docs-api-try-it', { fullPage: false });

  // The reference API's document; the surface is kept in the address.
  await page.getByRole('button', { name: 'Reference API (/v1)' }).click();
  await operation(page, 'GET', '/v1/health').waitFor();
  t.is(await page.locator('.opblock-summary-path[data-path^="/api/"]').count(), 0, 'the reference API alone');
  t.regex(page.url(), /\?surface=reference/);
  t.deepEqual(refused, [], 'nothing refused by the page\'s Content-Security-Policy');
});
