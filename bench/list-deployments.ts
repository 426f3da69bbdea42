// `npm run bench`: seeds 100,000 deployments in one organization and measures authenticated
// GET /api/deployments?limit=20 (first page, a page ~90,000 rows deep), a model catalog search and a dry run's
// checks (POST /v1/deployments/validate?preview=false; the preview itself is timed by npm run bench:workflows,
// which runs a worker) against a bare Koa route running one indexed query of the same shape on the same database. Uses DATABASE_URL when set, else an
// embedded PostgreSQL under DATA_DIR/bench.
import { startBenchApi } from './support/bench-api.ts';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import Koa from 'koa';

const ROWS = 100_000;
const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = 3;
const CONNECTIONS = 10;

const api = await startBenchApi('list');
const { pool } = api;
const base = api.url;

async function call(method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json() as Promise<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

console.log(`seeding ${ROWS.toLocaleString()} deployments...`);
const session = await call('POST', '/v1/auth/signup', undefined, { email: 'bench@example.com', password: 'bench-password', name: 'Bench', organizationName: 'Bench' });
if (!session.user) throw new Error(`sign-up failed: ${JSON.stringify(session)}`);
const organizationId: string = session.user.organization_id;
const apiKey: string = (await call('POST', '/v1/settings/api-keys', session.access_token, { name: 'bench', scope: 'read_only' })).key;
await pool.query(`
  INSERT INTO deployment (id, created_at, updated_at, organization_id, name, model, runtime, gpu, status, endpoint, replicas, min_replicas, max_replicas, current_replicas)
  SELECT 'dep_' || md5(i::text), now() - make_interval(secs => i), now(), $1, 'bench-' || i, 'meta-llama/Llama-3.1-8B-Instruct',
         'vllm', 'nvidia-l4', 'running', 'https://bench.example', 1, 1, 1, 1
  FROM generate_series(1, $2::int) AS i`, [organizationId, ROWS]);
await pool.query('ANALYZE deployment');
// The organization's own models, which search reads beside the catalog: a large registry.
await pool.query(`
  INSERT INTO organization_model (id, created_at, updated_at, organization_id, reference, reference_key, default_vllm_args)
  SELECT 'mdl_' || md5(i::text), now(), now(), $1, 's3://bench-models/qwen-ft-' || i, 's3://bench-models/qwen-ft-' || i, '[]'
  FROM generate_series(1, 200) AS i`, [organizationId]);

// A cursor ~90% of the way down, reached by walking pages as a client would.
let deepCursor = '';
for (let seen = 0; seen < ROWS * 0.9; seen += 100) {
  const page = await call('GET', `/api/deployments?limit=100${deepCursor ? `&cursor=${encodeURIComponent(deepCursor)}` : ''}`, apiKey);
  deepCursor = page.pagination.nextCursor;
}

// Baseline: bare Koa, one pooled indexed query of the same shape, no auth, no ORM.
const bare = new Koa();
bare.use(async (ctx) => {
  const { rows } = await pool.query(
    'SELECT * FROM deployment WHERE organization_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 21', [organizationId]);
  ctx.body = rows.slice(0, 20);
});
const bareServer = bare.listen(0, '127.0.0.1');
await new Promise((resolve) => bareServer.once('listening', resolve));
const bareUrl = `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}/`;

const dryRun = JSON.stringify({ name: 'form-check', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas: 2 });
// A dry run places the deployment: a ready cluster offering L4s, as a registered one would (no worker runs here).
await pool.query(`INSERT INTO gpu_cluster (id, created_at, updated_at, name, provider, status, gpus)
  VALUES ('clu_bench', now(), now(), 'bench', 'kubernetes', 'ready', '[{"gpuType":"nvidia-l4","count":64}]')`);
// A dry run is part of creating: a key that may create.
const deployKey: string = (await call('POST', '/v1/settings/api-keys', session.access_token, { name: 'bench-deploy', scope: 'deployments_only' })).key;
const checked = await call('POST', '/v1/deployments/validate?preview=false', deployKey, JSON.parse(dryRun));
if (checked.valid !== true) throw new Error(`the dry run to measure does not pass its checks: ${JSON.stringify(checked)}`);
const scenarios: Array<[title: string, url: string, token?: string, body?: string]> = [
  ['bare Koa, one indexed query (baseline)', bareUrl],
  ['GET /api/deployments?limit=20, first page (API key)', `${base}/api/deployments?limit=20`, apiKey],
  ['GET /api/deployments?limit=20, ~90,000 rows deep (API key)', `${base}/api/deployments?limit=20&cursor=${encodeURIComponent(deepCursor)}`, apiKey],
  ['GET /api/deployments?limit=20, first page (access token)', `${base}/api/deployments?limit=20`, session.access_token],
  ['GET /v1/models/search?q=qwen&fitsGpu=nvidia-l4&limit=20 (API key)', `${base}/v1/models/search?orgId=${organizationId}&q=qwen&fitsGpu=nvidia-l4&limit=20`, apiKey],
  ['POST /v1/deployments/validate?preview=false (API key)', `${base}/v1/deployments/validate?preview=false`, deployKey, dryRun],
];

// The machine may be busy with other work: scenarios take turns over several rounds and each reports its
// median round, so a noisy moment does not decide a comparison.
const rounds: Array<Array<{ rps: number; p99: number; errors: number }>> = scenarios.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, [, url, token, body]] of scenarios.entries()) {
    const result = await autocannon({
      url, connections: CONNECTIONS, duration: DURATION_SECONDS, ...(body && { method: 'POST', body }),
      headers: { ...(token && { authorization: `Bearer ${token}` }), ...(body && { 'content-type': 'application/json' }) },
    });
    rounds[i]!.push({ rps: result.requests.average, p99: result.latency.p99, errors: result.non2xx + result.errors });
  }
}
const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const results = scenarios.map(([title], i) => ({
  title,
  'req/s': Math.round(median(rounds[i]!.map((r) => r.rps))),
  'p99 ms': median(rounds[i]!.map((r) => r.p99)),
  errors: rounds[i]!.reduce((sum, r) => sum + r.errors, 0),
}));
console.table(results);
const [baseline, first, deep, token, search, validate] = results as [typeof results[0], typeof results[0], typeof results[0], typeof results[0], typeof results[0], typeof results[0]];
const share = (r: typeof baseline) => `${(r['req/s'] / baseline['req/s'] * 100).toFixed(0)}%`;
console.log(`deep page / first page: p99 ${(deep['p99 ms'] / first['p99 ms']).toFixed(2)}x, req/s ${(deep['req/s'] / first['req/s']).toFixed(2)}x (aim: p99 <= 1.5x)`);
console.log(`authenticated list throughput / baseline: API key ${share(first)}, access token ${share(token)} (aim >= 50%)`);
console.log(`model search throughput / baseline: ${share(search)} (aim >= 60%)`);
console.log(`dry-run checks throughput / baseline: ${share(validate)} (the preview's own time: npm run bench:workflows)`);

await new Promise((resolve) => bareServer.close(resolve));
await api.close();
