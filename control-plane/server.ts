// The API server, wired as it ships: `npm run api` (main.ts), `npm start` (infra/start.ts), the tests and the
// benches all start it here, so a test exercises the wiring production runs.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { createApp, type KilnApp } from './app.ts';
import type { AppDeps } from './module.ts';
import type { ApiConfig } from './config.ts';
import { createClusterOrchestrator } from './clusters/orchestrator.ts';
import { openDatabase, type Orm } from './database/orm.ts';
import { createDeploymentOrchestrator } from './deployments/orchestrator.ts';
import { startDesiredStateRedelivery } from './deployments/desired-state-delivery.ts';
import { createMailer } from './mail/mailer.ts';
import { startMailOutbox } from './notifications/mail-outbox.ts';
import { createReportOrchestrator } from './reports/orchestrator.ts';

export interface StartApiOptions {
  /** The validated configuration (loadConfig('api')), with the database it names. */
  readonly config: ApiConfig & { readonly databaseUrl: string };
  /** Listens on all interfaces unless told otherwise. */
  readonly host?: string;
  /** A pino logger at the configured level unless given. */
  readonly log?: Logger;
  /** Database connections for the statements requests run outside the ORM. */
  readonly poolSize?: number;
  /** What tests and benches set otherwise: rate limits, the inference gateway's options, the mailer. */
  readonly overrides?: Partial<Pick<AppDeps, 'rateLimits' | 'inference' | 'mail'>>;
  /** How long a dry run waits for its preview (the orchestrator's default when absent). */
  readonly previewTimeoutMs?: number;
}

export interface RunningApi {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly server: Server;
  readonly app: KilnApp;
  readonly orm: Orm;
  readonly pool: pg.Pool;
  close(): Promise<void>;
}

export async function startApi(options: StartApiOptions): Promise<RunningApi> {
  const { config } = options;
  const log = options.log ?? pino({ level: config.logLevel, redact: ['req.headers.authorization'] });
  const orm = await openDatabase(config.databaseUrl);
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: options.poolSize ?? 10 });
  // An idle connection the server closes (a restart, a shutdown) is an event, not a crash; the pool reconnects.
  // Only the message: the error carries the whole client object.
  pool.on('error', (error) => log.warn({ message: error.message }, 'idle database connection closed'));
  // Connected on first use, so the API starts (and answers) while Temporal is away.
  const temporal = Connection.lazy({ address: config.temporalAddress });
  const client = new Client({ connection: temporal });
  const orchestrator = createDeploymentOrchestrator(client, { previewTimeoutMs: options.previewTimeoutMs });
  const mail = options.overrides?.mail ?? { mailer: createMailer(config, log), publicUrl: config.publicUrl };
  const app = createApp({
    config, orm, pool, log, orchestrator,
    reports: createReportOrchestrator(client),
    clusterOrchestrator: createClusterOrchestrator(client),
    mail,
    rateLimits: options.overrides?.rateLimits,
    inference: options.overrides?.inference,
  });
  // Changes saved while Temporal was unreachable reach their workflows once it answers again.
  const redelivery = startDesiredStateRedelivery({ orm, orchestrator, log });
  // Notification e-mails owed, the worker's included, leave from here.
  const mailOutbox = startMailOutbox({ orm, mailer: mail.mailer, log });
  const server = options.host === undefined ? app.listen(config.port) : app.listen(config.port, options.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  // GET /v1/ws: the live-updates sockets ride on this server (control-plane/live-updates/).
  const liveUpdates = app.services.liveUpdates;
  await liveUpdates.attach(server, app);
  const { port } = server.address() as AddressInfo;
  log.info({ port, env: config.env }, 'control plane listening');
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    app,
    orm,
    pool,
    async close() {
      // Open sockets would hold the server open: they close first (1001), and their clients reconnect elsewhere.
      await liveUpdates.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await redelivery.stop();
      await mailOutbox.stop();
      await app.close();
      await pool.end();
      await orm.close();
      await temporal.close();
    },
  };
}
