// The API server, wired as it ships: `npm run api` (main.ts), `npm start` (infra/start.ts), the tests and the
// benches all start it here, so a test exercises the wiring production runs. It keeps the process's concerns:
// the database, its pool and the Temporal connection it opens and closes, the HTTP server, and the order in which
// the app's modules start (before it listens) and stop (as and after it closes); each area's background work is
// its module's (module.ts start, preClose, close). The inference gateway (gateway/server.ts) opens its connections
// and listens through the same functions (openConnections, listenOrRelease).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { createApp, type KilnApp } from './app.ts';
import type { AppDeps } from './module.ts';
import type { ApiConfig } from './config.ts';
import { openDatabase, type Orm } from './database/orm.ts';
import { answerClientErrors } from './http/client-error.ts';
import { createMailer } from './mail/mailer.ts';

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
  /** How long a dry run waits for its preview (the deployment orchestrator's default when absent). */
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
  const log = options.log ?? serverLog(config);
  const { orm, pool, temporal, close: closeConnections } = await openConnections(config, log, { poolSize: options.poolSize ?? 10, migrate: true });
  const app = createApp({
    config, orm, pool, log,
    temporal,
    previewTimeoutMs: options.previewTimeoutMs,
    mail: options.overrides?.mail ?? { mailer: createMailer(config, log), publicUrl: config.publicUrl },
    rateLimits: options.overrides?.rateLimits,
    inference: options.overrides?.inference,
  });
  const server = createServer(app.callback());
  answerClientErrors(server);
  /** Everything this start opened, released in order (what listens first, then the modules, then the connections). */
  const release = async () => {
    // What would hold the server open goes first: the live-updates sockets close (1001) and their clients
    // reconnect elsewhere.
    await app.preClose();
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    // Then, in reverse order, the modules stop their background work and release what they hold.
    await app.close();
    await closeConnections();
  };
  // Every area's background work (modules.ts order) is under way before the first request.
  const port = await listenOrRelease(server, { port: config.port, host: options.host }, () => app.start(server), release, log);
  log.info({ port, env: config.env }, 'control plane listening');
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    app,
    orm,
    pool,
    close: release,
  };
}

/** A server process's logger: pino at the configured level, credentials never written. */
export const serverLog = (config: { logLevel: string }) => pino({ level: config.logLevel, redact: ['req.headers.authorization'] });

/** What a server process of Kiln's reads through (the API, the inference gateway). */
export interface Connections {
  readonly orm: Orm;
  /** For the statements requests run outside the ORM. */
  readonly pool: pg.Pool;
  /** Connected on first use, so the process starts (and answers) while Temporal is away. */
  readonly temporal: Client;
  /** Closes them, the pool and the ORM first. */
  close(): Promise<void>;
}

/** Opens the database (migrated first when `migrate`: the API owns the schema), a pool of `poolSize`, and Temporal. */
export async function openConnections(
  config: { databaseUrl: string; temporalAddress: string }, log: Logger, options: { poolSize: number; migrate: boolean },
): Promise<Connections> {
  const orm = await openDatabase(config.databaseUrl, { migrate: options.migrate });
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: options.poolSize });
  // An idle connection the server closes (a restart, a shutdown) is an event, not a crash; the pool reconnects.
  // Only the message: the error carries the whole client object.
  pool.on('error', (error) => log.warn({ message: error.message }, 'idle database connection closed'));
  const connection = Connection.lazy({ address: config.temporalAddress });
  return {
    orm, pool, temporal: new Client({ connection }),
    async close() {
      await pool.end();
      await orm.close();
      await connection.close();
    },
  };
}

/**
 * Runs `start`, then listens on `port` (all interfaces unless `host`); answers the port listened on. A start that
 * fails (a busy port, a module that cannot start) leaves nothing running behind its error: `release` runs first.
 */
export async function listenOrRelease(
  server: Server, at: { port: number; host?: string }, start: () => Promise<void> | void, release: () => Promise<void>, log: Logger,
): Promise<number> {
  try {
    await start();
    if (at.host === undefined) server.listen(at.port);
    else server.listen(at.port, at.host);
    await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  } catch (error) {
    await release().catch((closing: unknown) => log.warn({ err: closing }, 'releasing a failed start'));
    throw error;
  }
  return (server.address() as AddressInfo).port;
}
