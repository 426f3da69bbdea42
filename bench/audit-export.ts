// `npm run bench:audit`: seeds 200,000 audit records in one organization (one INSERT ... SELECT
// generate_series), then downloads GET /v1/enterprise/audit/export over HTTP as CSV and as JSON Lines, for
// the last 20,000 records and for all 200,000, and prints rows/s, bytes and the peak memory of the process
// (RSS and V8 heap used, sampled every 10 ms during the download; and the live heap, measured right after a
// forced garbage collection every 250 ms, which leaves out garbage not yet collected). Streaming shows as
// the same live heap for both sizes. A last run pauses the client for 3 s after its first chunk: with backpressure the server stops
// reading meanwhile, so memory stays flat there too. Uses DATABASE_URL when set, else an embedded
// PostgreSQL under DATA_DIR/bench.
import { startBenchApi } from './support/bench-api.ts';
import { setTimeout as sleep } from 'node:timers/promises';

const ROWS = 200_000;
const SMALL = 20_000;
const PAUSE_MS = 3_000;
const MB = 1024 * 1024;

const api = await startBenchApi('audit');
const { pool } = api;
const base = api.url;

const signup = await fetch(`${base}/v1/auth/signup`, {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password', name: 'Bench', organizationName: 'Bench' }),
});
const session = await signup.json() as { access_token: string; user: { id: string; organization_id: string } };
if (!signup.ok) throw new Error(`sign-up failed: ${JSON.stringify(session)}`);

console.log(`seeding ${ROWS.toLocaleString()} audit records...`);
const seedStarted = performance.now();
// One record a second, the newest an hour ago; a mix of actors, actions and resources.
await pool.query(`
  INSERT INTO audit_log (id, created_at, organization_id, user_id, api_key_id, action, resource_type, resource_id, ip_address, status_code)
  SELECT 'aud_' || lpad(i::text, 20, '0'), now() - interval '1 hour' - make_interval(secs => i), $1, $2,
         CASE WHEN i % 3 = 0 THEN NULL ELSE 'key_' || lpad((i % 7)::text, 20, '0') END,
         (ARRAY['listDeploymentsV1', 'createDeploymentV1', 'getDeployment', 'deploymentActionV1'])[i % 4 + 1],
         'deployment', 'dep_' || lpad((i % 500)::text, 20, '0'), '203.0.113.' || (i % 250), CASE WHEN i % 4 = 1 THEN 201 ELSE 200 END
  FROM generate_series(1, $3::int) AS i`, [session.user.organization_id, session.user.id, ROWS]);
await pool.query('ANALYZE audit_log');
console.log(`seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

// The window holding exactly the newest SMALL records.
const { rows: [boundary] } = await pool.query<{ created_at: Date }>(
  'SELECT created_at FROM audit_log WHERE organization_id = $1 ORDER BY created_at DESC OFFSET $2 LIMIT 1', [session.user.organization_id, SMALL - 1]);
const smallFrom = boundary!.created_at.toISOString();

interface Result { rows: number; bytes: number; seconds: number; cpuSeconds: number; peakRssMb: number; peakHeapMb: number; peakLiveMb: number; baseRssMb: number; baseLiveMb: number }

if (!globalThis.gc) throw new Error('run with node --expose-gc (npm run bench:audit does)');
const gc = globalThis.gc;

async function download(query: string, pauseAfterFirstChunk = 0): Promise<Result> {
  gc();
  const baseline = process.memoryUsage();
  let peakRss = baseline.rss;
  let peakHeap = baseline.heapUsed;
  let peakLive = baseline.heapUsed;
  let ticks = 0;
  const sampler = setInterval(() => {
    ticks += 1;
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed);
    if (ticks % 25 === 0) {
      gc();
      peakLive = Math.max(peakLive, process.memoryUsage().heapUsed);
    }
  }, 10);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const response = await fetch(`${base}/v1/enterprise/audit/export?orgId=${session.user.organization_id}&${query}`, { headers: { authorization: `Bearer ${session.access_token}` } });
  if (!response.ok) throw new Error(`export failed: ${response.status} ${await response.text()}`);
  // Count, never keep: the client must not be what holds the export in memory.
  let bytes = 0;
  let lines = 0;
  let first = true;
  for await (const chunk of response.body!) {
    bytes += chunk.byteLength;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines += 1;
    if (first && pauseAfterFirstChunk) await sleep(pauseAfterFirstChunk);
    first = false;
  }
  const seconds = (performance.now() - started) / 1000 - pauseAfterFirstChunk / 1000;
  clearInterval(sampler);
  const cpu = process.cpuUsage(cpuBefore);
  const rows = query.includes('format=csv') ? lines - 1 : lines;
  return { rows, bytes, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, peakRssMb: peakRss / MB, peakHeapMb: peakHeap / MB, peakLiveMb: peakLive / MB, baseRssMb: baseline.rss / MB, baseLiveMb: baseline.heapUsed / MB };
}

const scenarios: Array<[title: string, query: string, pause?: number]> = [
  [`csv, newest ${SMALL.toLocaleString()}`, `format=csv&from=${encodeURIComponent(smallFrom)}`],
  [`csv, all ${ROWS.toLocaleString()}`, 'format=csv'],
  [`jsonl, newest ${SMALL.toLocaleString()}`, `format=jsonl&from=${encodeURIComponent(smallFrom)}`],
  [`jsonl, all ${ROWS.toLocaleString()}`, 'format=jsonl'],
  [`csv, all ${ROWS.toLocaleString()}, client paused ${PAUSE_MS / 1000} s`, 'format=csv', PAUSE_MS],
];
// A warm-up download, so the first measured one does not carry module loading and JIT warm-up.
await download(`format=csv&from=${encodeURIComponent(smallFrom)}`);

const results = [];
for (const [title, query, pause] of scenarios) {
  const r = await download(query, pause);
  results.push({
    export: title,
    rows: r.rows,
    'MB sent': Number((r.bytes / MB).toFixed(1)),
    'rows/s': Math.round(r.rows / r.seconds),
    's': Number(r.seconds.toFixed(2)),
    // Server and client share the process; on a busy machine this says more than rows/s.
    'CPU ms / 1,000 rows': Number((r.cpuSeconds * 1e6 / r.rows).toFixed(1)),
    'peak RSS MB': Math.round(r.peakRssMb),
    'RSS growth MB': Math.round(r.peakRssMb - r.baseRssMb),
    'peak heap used MB': Math.round(r.peakHeapMb),
    'peak live heap MB': Number(r.peakLiveMb.toFixed(1)),
    'live heap growth MB': Number((r.peakLiveMb - r.baseLiveMb).toFixed(1)),
  });
}
console.table(results);
for (const format of ['csv', 'jsonl']) {
  const [small, all] = results.filter((r) => r.export.startsWith(format) && !r.export.includes('paused'));
  console.log(`${format}: ${(all!.rows / small!.rows).toFixed(0)}x the rows; live heap growth ${small!['live heap growth MB']} MB -> ${all!['live heap growth MB']} MB, `
    + `peak RSS ${small!['peak RSS MB']} MB -> ${all!['peak RSS MB']} MB`);
}

await api.close();
