// The inference gateway, wired as it ships: `npm run gateway` (main.ts), `npm start` (infra/start.ts), the tests
// and the benches all start it here. It opens what the gateway's app reads through (the database, a small pool,
// a Temporal connection for waking deployments scaled to zero), listens, and releases them in order. It runs no
// migration: the API owns the schema, and a gateway may start before or after it.
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../control-plane/config.ts';
import { answerClientErrors } from '../control-plane/http/client-error.ts';
import { listenOrRelease, openConnections, serverLog } from '../control-plane/server.ts';
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
  const log = options.log ?? serverLog(config);
  const { orm, pool, temporal, close: closeConnections } = await openConnections(config, log, { poolSize: 4, migrate: false });
  const app = createGatewayApp({ config, orm, pool, log, temporal, ...options.overrides });
  const server = createServer(app.callback());
  answerClientErrors(server);
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
    await closeConnections();
  };
  const port = await listenOrRelease(server, { port: config.port, host: options.host }, () => app.start(), release, log);
  log.info({ port, env: config.env }, 'inference gateway listening');
  return { url: `http://127.0.0.1:${port}`, server, close: release };
}
