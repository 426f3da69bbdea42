// The control plane as the benches run it, through the server every caller starts (control-plane/server.ts):
// its own database (DATABASE_URL's server, or an embedded PostgreSQL under DATA_DIR/bench), rate limits
// lifted (the limiter and audit still run on every request), and Temporal never reached (the benches only read).
import { join } from 'node:path';
import type pg from 'pg';
import { PLANS } from '../../catalog/plans.ts';
import type { AppDeps } from '../../control-plane/module.ts';
import { loadConfig } from '../../control-plane/config.ts';
import type { Orm } from '../../control-plane/database/orm.ts';
import { startApi } from '../../control-plane/server.ts';
import { createDatabase, startPostgres } from '../../infra/servers/postgres.ts';
import { freePort } from '../../infra/servers/process.ts';

const SIGNING_KEY = 'bench-signing-key-0123456789abcdefghijklmnop';
const UNLIMITED = Object.fromEntries(PLANS.map((plan) => [plan, { perMinute: 1e9, burst: 1e9 }])) as AppDeps['rateLimits'];

export interface BenchApi {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** Its database, for other processes of Kiln's the bench runs beside it (inference gateways). */
  readonly databaseUrl: string;
  /** The signing key it was started with: a gateway beside it needs the same. */
  readonly signingKey: string;
  readonly orm: Orm;
  readonly pool: pg.Pool;
  close(): Promise<void>;
}

/** `env`: further settings of the API's (e.g. PROMETHEUS_URL for the metric routes). */
export async function startBenchApi(name: string, env: Record<string, string> = {}): Promise<BenchApi> {
  const dataDir = join(process.env.DATA_DIR ?? '.data', 'bench');
  const server = process.env.DATABASE_URL ? undefined : await startPostgres({ dataDir, port: await freePort() });
  const databaseUrl = await createDatabase(process.env.DATABASE_URL ?? server!.url, `kiln_bench_${name}_${Date.now()}`);
  const config = await loadConfig('api', {
    DATABASE_URL: databaseUrl, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent',
    KILN_SIGNING_KEY: SIGNING_KEY, KILN_ENDPOINT_DOMAIN: 'endpoints.bench', KILN_PUBLIC_URL: 'http://kiln.bench',
    // Never connected: nothing a bench does tells a workflow anything.
    TEMPORAL_ADDRESS: '127.0.0.1:7233',
    ...env,
  });
  const api = await startApi({ config: { ...config, databaseUrl }, host: '127.0.0.1', overrides: { rateLimits: UNLIMITED } });
  // A connection the server drops (it is stopping) is not a crash of the bench.
  api.pool.on('error', (error) => console.error(`bench: idle database connection closed: ${error.message}`));
  return {
    url: api.url,
    databaseUrl,
    signingKey: SIGNING_KEY,
    orm: api.orm,
    pool: api.pool,
    async close() {
      await api.close();
      await server?.stop();
    },
  };
}
