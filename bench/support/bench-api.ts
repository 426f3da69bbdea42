// The control plane as the benches run it: its own database (DATABASE_URL's server, or an embedded
// PostgreSQL under DATA_DIR/bench), rate limits lifted (the limiter and audit still run on every request),
// and Temporal never reached (the benches only read).
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { pino } from 'pino';
import { createApp } from '../../control-plane/app.ts';
import { createClusterOrchestrator } from '../../control-plane/clusters/orchestrator.ts';
import { openDatabase, type Orm } from '../../control-plane/database/orm.ts';
import { createDeploymentOrchestrator } from '../../control-plane/deployments/orchestrator.ts';
import { createLogMailer } from '../../control-plane/mail/mailer.ts';
import { createReportOrchestrator } from '../../control-plane/reports/orchestrator.ts';
import { createDatabase, startPostgres } from '../../infra/servers/postgres.ts';
import { freePort } from '../../infra/servers/process.ts';

const UNLIMITED = { perMinute: 1e9, burst: 1e9 };

export interface BenchApi {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly orm: Orm;
  readonly pool: pg.Pool;
  close(): Promise<void>;
}

export async function startBenchApi(name: string): Promise<BenchApi> {
  const dataDir = join(process.env.DATA_DIR ?? '.data', 'bench');
  const server = process.env.DATABASE_URL ? undefined : await startPostgres({ dataDir, port: await freePort() });
  const databaseUrl = await createDatabase(process.env.DATABASE_URL ?? server!.url, `kiln_bench_${name}_${Date.now()}`);
  const orm = await openDatabase(databaseUrl);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  // A connection the server drops (it is stopping) is not a crash of the bench.
  pool.on('error', (error) => console.error(`bench: idle database connection closed: ${error.message}`));
  const log = pino({ level: 'silent' });
  // Never connected: nothing a bench does tells a workflow anything.
  const temporal = new Client({ connection: Connection.lazy({ address: '127.0.0.1:7233' }) });
  const app = createApp({
    config: { env: 'development', signingKey: 'bench-signing-key-0123456789abcdefghijklmnop', endpointDomain: 'endpoints.bench', trustProxy: false, adminEmails: [], dataDir, errorTrackerUrl: undefined },
    orm, pool, log,
    mail: { mailer: createLogMailer(log), publicUrl: 'http://kiln.bench' },
    rateLimits: { free: UNLIMITED, startup: UNLIMITED, growth: UNLIMITED, enterprise: UNLIMITED },
    orchestrator: createDeploymentOrchestrator(temporal),
    reports: createReportOrchestrator(temporal),
    clusterOrchestrator: createClusterOrchestrator(temporal),
  });
  const listening = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => listening.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`,
    orm,
    pool,
    async close() {
      await new Promise((resolve) => listening.close(resolve));
      await app.close();
      await pool.end();
      await orm.close();
      await server?.stop();
    },
  };
}
