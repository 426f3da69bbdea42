// An area of the API adds itself to Kiln as one module: the services it builds and its routes (each declaring
// its permission). modules.ts lists the modules in order and the app (app.ts) is built from that list, so a new
// area is a folder and one line there; its entities are listed in database/entities.ts, which the worker loads
// without the API.
import type { Middleware } from 'koa';
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Plan, PlanLimit } from '../catalog/plans.ts';
import type { ClusterOrchestrator } from './clusters/orchestrator.ts';
import type { Config } from './config.ts';
import type { DeploymentOrchestrator } from './deployments/orchestrator.ts';
import type { InferenceGatewayOptions } from './inference/gateway.ts';
import type { Mailer } from './mail/mailer.ts';
import type { ReportOrchestrator } from './reports/orchestrator.ts';
import type { CursorCodec } from './core/pagination.ts';
import type { KeyPurpose } from '../lib/keys.ts';
import type { Route } from './http/routes.ts';
import type { AppState } from './http/context.ts';

/** What the app is built from (app.ts createApp): every module's context starts with it. */
export interface AppDeps {
  config: Pick<Config, 'env' | 'signingKey' | 'secretsKeys' | 'endpointDomain' | 'trustProxy' | 'adminEmails' | 'dataDir' | 'errorTrackerUrl' | 'hub' | 'metricsToken' | 'prometheusUrl' | 'stripe' | 'liveUpdates' | 'webDist' | 'temporalUiUrl'>;
  orm: MikroORM;
  /** For the statements every request runs outside the ORM: rate-limit counters, audit records. */
  pool: pg.Pool;
  log: Logger;
  /** Overrides the plans' rate limits (tests, bench). */
  rateLimits?: Readonly<Record<Plan, PlanLimit>>;
  /** Sends deployments' desired state to their workflows. */
  orchestrator: DeploymentOrchestrator;
  /** Starts report workflows (platform administration). */
  reports: ReportOrchestrator;
  /** Sends `aws` GPU clusters' desired state to their workflows. */
  clusterOrchestrator: ClusterOrchestrator;
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

export interface ApiModule {
  readonly name: string;
  services?(context: ModuleContext): Partial<Services>;
  routes?(context: ModuleContext): Route[];
  /**
   * Answers requests whose path no route declares (the dashboard's files), before authentication and rate
   * limits: app.ts calls it for those paths only, so it can never shadow a route. undefined: nothing to serve.
   */
  fallback?(context: ModuleContext): Middleware<AppState> | undefined;
  /** Runs when the app closes (after the server stopped answering, before the database closes). */
  close?(services: Services): Promise<void> | void;
}

export const defineModule = (module: ApiModule): ApiModule => module;
