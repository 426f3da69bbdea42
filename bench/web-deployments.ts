// `npm run bench:web`: the dashboard's deployments list with 1,000 deployments in one organization against
// the same page with 1 (the baseline, same run, same API), in headless Chromium. Time to interactive is
// navigation start -> the first row is in the table and a task posted at that moment has run (the main
// thread is free to take input); median of 5 loads, each in a fresh browser context (nothing cached).
// Also prints what the first page downloads: its JS and CSS, gzipped, from the vite build.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { launchBrowser, webDistForTests } from '../test/web/support/browser.ts';
import { startBenchApi } from './support/bench-api.ts';

const ROWS = 1_000;
const LOADS = 5;

const webDist = await webDistForTests();
const api = await startBenchApi('web', { KILN_WEB_DIST: webDist });
const base = api.url;

async function signUp(label: string) {
  const response = await fetch(`${base}/v1/auth/signup`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `${label}@example.com`, password: 'bench-password', name: label, organizationName: label }),
  });
  const body = await response.json() as { access_token: string; refresh_token: string; expires_in: number; user: { id: string; email: string; organization_id: string } };
  if (!body.user) throw new Error(`sign-up failed: ${JSON.stringify(body)}`);
  // The dashboard's session (web/src/session.ts), as sign-in would keep it.
  return {
    organizationId: body.user.organization_id,
    session: JSON.stringify({
      accessToken: body.access_token, refreshToken: body.refresh_token, expiresAt: Date.now() + body.expires_in * 1000,
      userId: body.user.id, email: body.user.email, organizationId: body.user.organization_id,
    }),
  };
}

async function seed(organizationId: string, rows: number) {
  await api.pool.query(`
    INSERT INTO deployment (id, created_at, updated_at, organization_id, name, model, runtime, gpu, status, endpoint, replicas, min_replicas, max_replicas, current_replicas)
    SELECT 'dep_' || md5($1 || i::text), now() - make_interval(secs => i), now(), $1, 'bench-' || i, 'meta-llama/Llama-3.1-8B-Instruct',
           'vllm', 'nvidia-l4', (ARRAY['running', 'deploying', 'stopped', 'failed'])[1 + i % 4], 'https://bench.example', 1, 1, 2, i % 2
    FROM generate_series(1, $2::int) AS i`, [organizationId, rows]);
}

console.log(`seeding ${ROWS.toLocaleString()} deployments...`);
const many = await signUp('bench-many');
const one = await signUp('bench-one');
await seed(many.organizationId, ROWS);
await seed(one.organizationId, 1);
await api.pool.query('ANALYZE deployment');

const browser = await launchBrowser(base);

/** One load of /deployments in a fresh context: ms from navigation start to interactive, and what it fetched. */
async function load(session: string): Promise<{ ms: number; assets: string[] }> {
  const page: Page = await browser.page();
  await page.goto('/sign-in');
  await page.evaluate((value) => localStorage.setItem('kiln.session', value), session);
  await page.context().clearCookies();
  const assets: string[] = [];
  page.on('response', (response) => {
    const path = new URL(response.url()).pathname;
    if (/\.(js|css)$/.test(path)) assets.push(path);
  });
  // Before any of the page's scripts: watch for the first row, then post a task; when it runs, the page takes input.
  await page.addInitScript(() => {
    const done = (ms: number) => { (window as unknown as { interactiveAt: number }).interactiveAt = ms; };
    const observer = new MutationObserver(() => {
      if (!document.querySelector('table tbody tr a')) return;
      observer.disconnect();
      const channel = new MessageChannel();
      channel.port1.onmessage = () => done(performance.now());
      channel.port2.postMessage(null);
    });
    observer.observe(document, { childList: true, subtree: true });
  });
  await page.goto('/deployments', { waitUntil: 'commit' });
  await page.waitForFunction(() => (window as unknown as { interactiveAt?: number }).interactiveAt !== undefined, undefined, { timeout: 60_000 });
  const ms = await page.evaluate(() => (window as unknown as { interactiveAt: number }).interactiveAt);
  await page.context().close();
  return { ms, assets: [...new Set(assets)] };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(label: string, session: string) {
  await load(session); // warms the API's caches (credential, plan), as a user's second visit
  const runs: number[] = [];
  let assets: string[] = [];
  for (let i = 0; i < LOADS; i += 1) {
    const result = await load(session);
    runs.push(result.ms);
    assets = result.assets;
  }
  console.log(`${label.padEnd(44)} median ${median(runs).toFixed(0).padStart(5)} ms   (${runs.map((r) => r.toFixed(0)).join(', ')})`);
  return { median: median(runs), assets };
}

console.log(`\n/deployments, time to interactive (navigation start -> first row and a free main thread), median of ${LOADS} cold loads:`);
const baseline = await measure('1 deployment (baseline)', one.session);
const measured = await measure(`${ROWS.toLocaleString()} deployments (first page of 50 shown)`, many.session);
console.log(`difference: ${(measured.median - baseline.median).toFixed(0)} ms (${((measured.median / baseline.median - 1) * 100).toFixed(0)}%)`);

// What the first page downloads (the entry, its CSS and the list's own chunk), gzipped as a server would send them.
let total = 0;
console.log('\n/deployments downloads (JS + CSS, gzip -9 of the vite build):');
for (const asset of measured.assets.sort()) {
  const bytes = gzipSync(await readFile(join(webDist, asset)), { level: 9 }).length;
  total += bytes;
  console.log(`  ${asset.padEnd(48)} ${(bytes / 1024).toFixed(1).padStart(7)} kB`);
}
console.log(`  ${'total'.padEnd(48)} ${(total / 1024).toFixed(1).padStart(7)} kB`);

await browser.close();
await api.close();
