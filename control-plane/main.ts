// Starts the control plane: `npm run api` (configuration from the environment), or startApi() from
// another module (infra/start.ts) with the database and port it chose.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { pino } from 'pino';
import { DEV_POSTGRES_PORT, startPostgres } from '../infra/servers/postgres.ts';
import { createApp } from './app.ts';
import { exitOnConfigError, loadConfig } from './config.ts';
import { openDatabase } from './database/orm.ts';
import { createDeploymentOrchestrator } from './deployments/orchestrator.ts';
import { createClusterOrchestrator } from './clusters/orchestrator.ts';
import { startDesiredStateRedelivery } from './deployments/desired-state-delivery.ts';
import { createMailer } from './mail/mailer.ts';
import { createReportOrchestrator } from './reports/orchestrator.ts';


export interface StartApiOptions {
  databaseUrl: string;
  port: number;
  dataDir: string;
  /** host:port of the Temporal frontend; connected lazily, so the API starts (and answers) without it. */
  temporalAddress: string;
}

export interface RunningApi {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

export async function startApi(options: StartApiOptions): Promise<RunningApi> {
  const config = await loadConfig('api', { ...process.env, DATABASE_URL: options.databaseUrl, PORT: String(options.port), DATA_DIR: options.dataDir });
  const log = pino({ level: config.logLevel, redact: ['req.headers.authorization'] });
  const orm = await openDatabase(options.databaseUrl);
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
  // An idle connection the server closes (a restart, a shutdown) is an event, not a crash; the pool reconnects.
  // Only the message: the error carries the whole client object.
  pool.on('error', (error) => log.warn({ message: error.message }, 'idle database connection closed'));
  const temporal = Connection.lazy({ address: options.temporalAddress });
  const client = new Client({ connection: temporal });
  const orchestrator = createDeploymentOrchestrator(client);
  const mail = { mailer: createMailer(config, log), publicUrl: config.publicUrl };
  const app = createApp({ config, orm, pool, log, orchestrator, mail, reports: createReportOrchestrator(client), clusterOrchestrator: createClusterOrchestrator(client) });
  // Changes saved while Temporal was unreachable reach their workflows once it answers again.
  const redelivery = startDesiredStateRedelivery({ orm, orchestrator, log });
  const server = app.listen(config.port);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { port } = server.address() as AddressInfo;
  log.info({ port, env: config.env }, 'control plane listening');
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await redelivery.stop();
      await app.close();
      await pool.end();
      await orm.close();
      await temporal.close();
    },
  };
}

if (import.meta.main) {
  const config = await loadConfig('api').catch(exitOnConfigError);
  const postgres = config.databaseUrl ? undefined : await startPostgres({ dataDir: config.dataDir, port: DEV_POSTGRES_PORT });
  const api = await startApi({
    databaseUrl: config.databaseUrl ?? postgres!.url, port: config.port, dataDir: config.dataDir, temporalAddress: config.temporalAddress,
  });
  const stop = async () => {
    await api.close();
    await postgres?.stop();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
