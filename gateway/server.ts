// The inference gateway, wired as it ships: `npm run gateway` (main.ts), `npm start` (infra/start.ts), the tests
// and the benches all start it here. It opens what the gateway's app reads through (the database, a small pool,
// a Temporal connection for waking deployments scaled to zero), listens, and releases them in order. It runs no
// migration: the API owns the schema, and a gateway may start before or after it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import type { GatewayConfig } from '../control-plane/config.ts';
import { openDatabase } from '../control-plane/database/orm.ts';
import { createGatewayApp, type GatewayAppDeps } from './app.ts';

export interface StartGatewayOptions {
  /** The validated configuration (loadConfig('gateway')), with the database it names. */
  readonly config: GatewayConfig & { readonly databaseUrl: string };
  /** Listens on all interfaces unless told otherwise. */
  readonly host?: string;
  readonly log?: Logger;
  /** What tests and benches set otherwise: rate limits, the inference gateway's options. */
  readonly overrides?: Partial<Pick<GatewayAppDeps, 'rateLimits' | 'inference'>>;
}

export interface RunningGateway {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const { config } = options;
  const log = options.log ?? pino({ level: config.logLevel, redact: ['req.headers.authorization'] });
  const orm = await openDatabase(config.databaseUrl, { migrate: false });
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 4 });
  pool.on('error', (error) => log.warn({ message: error.message }, 'idle database connection closed'));
  const temporal = Connection.lazy({ address: config.temporalAddress });
  const app = createGatewayApp({ config, orm, pool, log, temporal: new Client({ connection: temporal }), ...options.overrides });
  const server = createServer(app.callback());
  // Streams may last minutes: a keep-alive connection between two requests is what a load balancer reuses.
  server.keepAliveTimeout = 65_000;
  const release = async () => {
    if (server.listening) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle kept-alive connections would hold close() until they time out.
        server.closeIdleConnections();
      });
    }
    await app.close();
    await pool.end();
    await orm.close();
    await temporal.close();
  };
  try {
    app.start();
    if (options.host === undefined) server.listen(config.port);
    else server.listen(config.port, options.host);
    await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  } catch (error) {
    await release().catch((closing: unknown) => log.warn({ err: closing }, 'releasing a failed start'));
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  log.info({ port, env: config.env }, 'inference gateway listening');
  return { url: `http://127.0.0.1:${port}`, server, close: release };
}
