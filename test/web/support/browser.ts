// The dashboard's browser tests: Debian's Chromium headless shell (npm run tools installs it) driven by
// playwright-core, which downloads no browser. One browser per test file, a fresh context (storage,
// viewport, colour scheme) per test; the API of startTestApi serves the built web/dist.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ExecutionContext } from 'ava';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { WEB_DIST } from '../../../control-plane/config.ts';
import { buildWeb, webBuild } from '../../../infra/web-build.ts';
import { staleReason } from '../../../infra/stale-build.ts';
import { startTestApi, TEST_PASSWORD, type signup, type TestApi, type TestApiOverrides } from '../../support/control-plane.ts';

type TestUser = Awaited<ReturnType<typeof signup>>;

/** Where screenshots go: DATA_DIR/test/screenshots (.data/test/screenshots by default). */
export const SCREENSHOT_DIR = join(process.env.KILN_TEST_DATA_DIR ?? resolve(import.meta.dirname, '../../../.data/test'), 'screenshots');

/**
 * Chromium's headless shell (Debian's chromium-headless-shell, the build Playwright itself runs headless): the
 * same Blink as the full browser without its desktop layers, at about half the CPU per test file. The command
 * /usr/bin/chromium-headless-shell is a wrapper script; the browser is beside Chromium's own files.
 */
function chromiumPath(): string {
  if (process.env.KILN_CHROMIUM) return process.env.KILN_CHROMIUM;
  for (const candidate of ['/usr/lib/chromium/chromium-headless-shell', '/usr/bin/chromium-headless-shell']) if (existsSync(candidate)) return candidate;
  throw new Error('Chromium\'s headless shell is missing: npm run tools installs Debian\'s chromium-headless-shell package (or set KILN_CHROMIUM)');
}

export const PHONE: BrowserContextOptions = { viewport: { width: 375, height: 812 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
export const LAPTOP: BrowserContextOptions = { viewport: { width: 1366, height: 800 } };

export interface WebTestEnvironment {
  api: TestApi;
  browser: Browser;
  /** A new context and page on the dashboard's origin (laptop-sized unless told); closed by close(). */
  page(options?: BrowserContextOptions): Promise<Page>;
  /** A new page signed in through the sign-in form as `email` (a test user, whose password all share), landed on `path`. */
  signIn(path: string, email: string, options?: BrowserContextOptions): Promise<Page>;
  /**
   * A new page holding `user`'s session (as sign-up keeps it: web/src/session.ts), acting in `organizationId`
   * (theirs unless told), without going through the form: it has made no call yet. The access token lasts an hour.
   */
  withSession(user: TestUser, organizationId?: string, options?: BrowserContextOptions): Promise<Page>;
  close(): Promise<void>;
}

/**
 * For test.before: builds web/dist if it is missing or stale (npm test has built it already), starts a test
 * API serving it (with `overrides`, e.g. a mailer) and launches Chromium.
 */
export async function startWebTest(testFile: string, overrides: TestApiOverrides = {}): Promise<WebTestEnvironment> {
  const webDist = await webDistForTests();
  const api = await startTestApi(testFile, { ...overrides, config: { ...overrides.config, webDist } });
  const launched = await launchBrowser(api.url);
  return {
    ...launched,
    api,
    async signIn(path, email, options) {
      const page = await launched.page(options);
      await page.goto(`/sign-in?next=${encodeURIComponent(path)}`);
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname === path.split('?')[0]);
      return page;
    },
    async withSession(user, organizationId = user.organizationId, options) {
      const page = await launched.page(options);
      await page.goto('/sign-in');
      await page.evaluate((session) => localStorage.setItem('kiln.session', session), JSON.stringify({
        accessToken: user.token, refreshToken: user.refreshToken, expiresAt: Date.now() + 3_600_000,
        userId: user.userId, email: user.email, organizationId,
      }));
      return page;
    },
    async close() {
      await launched.close();
      await api.close();
    },
  };
}

/**
 * The dashboard's build the tests serve: KILN_TEST_WEB_DIST (a build made elsewhere, so that two people
 * editing web/ at once each test their own), else web/dist, built first if it is missing or stale.
 */
export async function webDistForTests(): Promise<string> {
  const webDist = process.env.KILN_TEST_WEB_DIST ?? WEB_DIST;
  if (webDist === WEB_DIST && await staleReason(webBuild)) await buildWeb();
  return webDist;
}

export interface LaunchedBrowser {
  browser: Browser;
  /** A new context and page on `url`'s origin (laptop-sized unless told); closed by close(). */
  page(options?: BrowserContextOptions): Promise<Page>;
  close(): Promise<void>;
}

/** Chromium against a dashboard served at `url`: a test API's, or Kiln's own API process (end-to-end files). */
export async function launchBrowser(url: string): Promise<LaunchedBrowser> {
  const browser = await chromium.launch({ executablePath: chromiumPath(), headless: true });
  const contexts: BrowserContext[] = [];
  return {
    browser,
    async page(options = {}) {
      const context = await browser.newContext({ ...LAPTOP, baseURL: url, ...options });
      // A loaded 2-core machine (the other test files and their servers beside this one) can take a page past
      // Playwright's default 30 s; what the page shows is still what every step waits for.
      context.setDefaultTimeout(60_000);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
      contexts.push(context);
      return context.newPage();
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close();
    },
  };
}

/** How every page is looked at: the system's light and dark modes at a laptop's width, and a phone. */
export const LOOKS = [['light', {}], ['dark', { colorScheme: 'dark' }], ['phone', PHONE]] as const satisfies readonly (readonly [string, BrowserContextOptions])[];
export type Look = (typeof LOOKS)[number][0];

/** Skeletons gone: what the page loaded is on it. */
export const loaded = (page: Page) => page.waitForFunction(() => !document.querySelector('.loading-rows, .skeleton'));

/**
 * Opens each [name, path, heading] on `page` in turn, waits for the heading and the loaded data, and checks it
 * as a user would see it in `look`: axe-core, nothing wider than a phone's screen, a screenshot `<name>-<look>`
 * (with `phoneTop`, also the phone's first screen alone).
 */
export async function checkPages(t: ExecutionContext, page: Page, look: Look, pages: readonly (readonly [string, string, string])[], options: { phoneTop?: boolean } = {}): Promise<void> {
  for (const [name, path, heading] of pages) {
    await page.goto(path);
    await page.getByRole('heading', { name: heading }).waitFor();
    await loaded(page);
    if (look === 'phone') t.true(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name} fits the phone`);
    await axe(t, page, `${name} (${look})`);
    await screenshot(page, `${name}-${look}`);
    if (look === 'phone' && options.phoneTop) await screenshot(page, `${name}-${look}-top`, { fullPage: false });
  }
}

/** Fails the test on any serious or critical accessibility violation axe-core finds in the page as it is now. */
export async function axe(t: ExecutionContext, page: Page, what: string): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const said = bad.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join('; ')})`);
  t.deepEqual(said, [], `axe-core on ${what}`);
}

/**
 * Saves a PNG as SCREENSHOT_DIR/<name>.png, to look at after the run: the whole page, or with
 * `{ fullPage: false }` the viewport as the user sees it (a modal dialog's backdrop covers only that).
 */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  // Fonts loaded, so the picture is what a user sees.
  await page.evaluate(() => document.fonts.ready.then(() => undefined));
  await page.screenshot({ path, fullPage: options.fullPage ?? true, animations: 'disabled' });
  return path;
}
