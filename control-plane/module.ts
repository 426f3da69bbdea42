// An area of the API adds itself to Kiln as one module: the services it builds, its routes (each declaring
// its permission), and its whole life: the background work it starts and stops (its loops, a socket server on
// the HTTP server) and what its services hold, released when the app closes. modules.ts lists the modules in
// order and the app (app.ts) is built from that list, so a new area is a folder and one line there; its
// `*.entity.ts` files are found by name (database/entities.ts), which the worker loads without the API.
import type { Server } from 'node:http';
import type { Client } from '@temporalio/client';
import type Koa from 'koa';
import type { Middleware } from 'koa';
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Plan, PlanLimit } from '../catalog/plans.ts';
import type { Config } from './config.ts';
import type { InferenceGatewayOptions } from './inference/gateway.ts';
import type { Mailer } from './mail/mailer.ts';
import type { CursorCodec } from './core/pagination.ts';
import type { KeyPurpose } from '../lib/keys.ts';
import type { Route } from './http/routes.ts';
import type { AppState } from './http/context.ts';

/** What the app is built from (app.ts createApp): every module's context starts with it. */
export interface AppDeps {
  config: Pick<Config, 'env' | 'signingKey' | 'secretsKeys' | 'endpointDomain' | 'trustProxy' | 'adminEmails' | 'errorTrackerUrl' | 'hub' | 'metricsToken' | 'prometheusUrl' | 'stripe' | 'liveUpdates' | 'webDist' | 'docsDist' | 'temporalUiUrl'>;
  orm: MikroORM;
  /** For the statements every request runs outside the ORM: rate-limit counters, audit records. */
  pool: pg.Pool;
  log: Logger;
  /** Overrides the plans' rate limits (tests, bench). */
  rateLimits?: Readonly<Record<Plan, PlanLimit>>;
  /**
   * Temporal, for the areas that start or signal workflows (each builds its orchestrator from it in its module).
   * Connected on first use, so the API starts and answers while Temporal is away; server.ts closes it.
   */
  temporal: Client;
  /** How long a dry run waits for its preview (the deployment orchestrator's default when absent; tests). */
  previewTimeoutMs?: number;
  /** Outgoing mail, and the public address its links start with. */
  mail: { mailer: Mailer; publicUrl: string };
  /** Overrides the inference gateway's timeouts and the addresses it may connect to (tests: loopback only). */
  inference?: Partial<InferenceGatewayOptions>;
}

/**
 * The services modules build, by name. Each area adds its own from its module file:
 * `declare module '../module.ts' { interface Services { deployments: DeploymentService } }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface Services {}

export interface ModuleContext extends AppDeps {
  /** A key derived from the signing key for one purpose (HKDF): each purpose gets its own. */
  key(purpose: KeyPurpose): Buffer;
  /** Signs the pagination cursors of every list. */
  cursors: CursorCodec;
  /** Services of the modules listed before this one; routes see them all. Reading one not built yet throws. */
  services: Services;
  /** Every route of the app, once all are declared (the OpenAPI document, analytics). */
  routes(): readonly Route[];
}

/** What a module's start sees: its context, with the HTTP server the app is about to listen on. */
export interface StartContext extends ModuleContext {
  /** Not listening yet: every start runs before the first request. */
  server: Server;
  /** The app, whose handler a module that takes over requests from the server (an upgrade) runs them through. */
  app: Pick<Koa, 'callback'>;
}

export interface ApiModule {
  readonly name: string;
  services?(context: ModuleContext): Partial<Services>;
  routes?(context: ModuleContext): Route[];
  /**
   * Answers requests whose path no route declares (the dashboard's files), before authentication and rate
   * limits: app.ts calls it for those paths only, so it can never shadow a route. undefined: nothing to serve.
   */
  fallback?(context: ModuleContext): Middleware<AppState> | undefined;
  /**
   * Starts the area's background work (a loop, a pass over its rows, a socket server on the HTTP server).
   * server.ts runs every module's start in list order, and listens once all have.
   */
  start?(context: StartContext): Promise<void> | void;
  /**
   * Runs as the server stops, before it waits for the requests under way (in reverse list order): lets go of
   * what would hold it open, such as upgraded sockets.
   */
  preClose?(services: Services): Promise<void> | void;
  /**
   * Stops the area's background work and releases what its services hold, in reverse list order, once the
   * server stopped answering and before the database and Temporal close.
   */
  close?(services: Services): Promise<void> | void;
}

export const defineModule = (module: ApiModule): ApiModule => module;
