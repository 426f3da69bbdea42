// The inference gateway's Koa app: the inference routes (control-plane/inference, the same declarations, service
// and relay the API serves them with) behind a middleware of its own, lean where the API's is thorough:
// - credentials from the cache every API replica keeps (a revocation is seen within CREDENTIAL_CACHE_MS), answered
//   past their time while the database is away;
// - rate limits counted in memory and added to the shared counters every flush (http/rate-counters.ts), never a
//   round trip on a request's path;
// - audit records (the usage: tokens per request) queued and written in batches, never before an answer;
// - a deployment's lookup answered from what this replica resolved within TARGET_FRESH_MS, refreshed in the
//   background; no dependency guard: while the database is away, what it resolved before is still served.
// It serves nothing else but its liveness, readiness and metrics.
import { METHODS } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { PlanLimit, Plan } from '../catalog/plans.ts';
import { deriveKey } from '../lib/keys.ts';
import { metricsTokenMatches } from '../lib/metrics.ts';
import { createSecretBox } from '../lib/secret-box.ts';
import { createApiKeyService } from '../control-plane/api-keys/service.ts';
import { createAuditService } from '../control-plane/audit/service.ts';
import { createCredentialCache } from '../control-plane/auth/credential-cache.ts';
import { createAccessTokens } from '../control-plane/auth/tokens.ts';
import { createClusterOrchestrator } from '../control-plane/clusters/orchestrator.ts';
import { createClusterService } from '../control-plane/clusters/service.ts';
import type { GatewayConfig } from '../control-plane/config.ts';
import type { Orm } from '../control-plane/database/orm.ts';
import { createDeploymentOrchestrator } from '../control-plane/deployments/orchestrator.ts';
import { createDependencyMonitor } from '../control-plane/health/dependencies.ts';
import { HEALTH_PATHS, healthRoutes, isProbe } from '../control-plane/health/routes.ts';
import { declaredRouteOf, logAnswerFailures } from '../control-plane/http/app-wiring.ts';
import { auditTrail } from '../control-plane/http/audit.ts';
import { authenticate } from '../control-plane/http/authenticate.ts';
import type { AppState } from '../control-plane/http/context.ts';
import { errorHandler } from '../control-plane/http/error-handler.ts';
import { measureRequests } from '../control-plane/http/metrics.ts';
import { batchedCounters } from '../control-plane/http/rate-counters.ts';
import { rateLimit } from '../control-plane/http/rate-limit.ts';
import { requestContext } from '../control-plane/http/request-context.ts';
import { mountRoutes } from '../control-plane/http/routes.ts';
import { idempotency } from '../control-plane/idempotency/middleware.ts';
import { createInferenceGateway, type InferenceGatewayOptions } from '../control-plane/inference/gateway.ts';
import { inferenceRoutes } from '../control-plane/inference/routes.ts';
import { createInferenceService } from '../control-plane/inference/service.ts';
import { createApiMetrics } from '../control-plane/observability/metrics.ts';
import { observabilityRoutes } from '../control-plane/observability/routes.ts';
import { createOrganizationService } from '../control-plane/organizations/service.ts';
import { createCircuitService } from '../control-plane/recovery/circuits.ts';
import { createServiceKeyService } from '../control-plane/service-keys/service.ts';

/** How often the gateway adds its rate-limit counts to the shared counters (and learns the other replicas'). */
export const RATE_COUNT_FLUSH_MS = 250;
/** How long a deployment's target, once looked up, answers for the lookup (a stop or a deletion is seen within it). */
export const TARGET_FRESH_MS = 1_000;
/** How long past its load a credential is still answered while the database is away. */
export const STALE_CREDENTIAL_MS = 10 * 60_000;

export interface GatewayAppDeps {
  config: Pick<GatewayConfig, 'env' | 'signingKey' | 'secretsKeys' | 'trustProxy' | 'metricsToken'>;
  orm: Orm;
  /** The audit records' batches and the rate-limit counters. */
  pool: pg.Pool;
  temporal: Client;
  log: Logger;
  /** Overrides the plans' rate limits (tests, bench). */
  rateLimits?: Readonly<Record<Plan, PlanLimit>>;
  /** Overrides the inference gateway's timeouts and the addresses it may connect to (tests: loopback only). */
  inference?: Partial<InferenceGatewayOptions>;
}

export type GatewayApp = Koa<AppState> & {
  /** Starts the dependency probes; call before listening. */
  start(): void;
  /** Stops the probes and pod watches, and writes the queued audit records and rate-limit counts. */
  close(): Promise<void>;
};

export function createGatewayApp(deps: GatewayAppDeps): GatewayApp {
  const { config, log } = deps;
  const key = (purpose: Parameters<typeof deriveKey>[1]) => deriveKey(config.signingKey, purpose);
  const metrics = createApiMetrics();
  // The database is probed as often as the API's (a loss is served from the caches within 2 s); Temporal, needed
  // only to wake deployments scaled to zero, every few seconds.
  const dependencies = createDependencyMonitor({ database: deps.pool.options, temporal: deps.temporal, temporalIntervalMs: 5_000 });
  const credentials = createCredentialCache({
    observe: (result) => metrics.credentialLookup(result),
    staleWhileUnavailable: { databaseAvailable: () => dependencies.databaseAvailable(), maxAgeMs: STALE_CREDENTIAL_MS },
  });
  // Inference needs no administrator's rights: the gateway knows no administrators.
  const organizations = createOrganizationService({ adminEmails: [] });
  const apiKeys = createApiKeyService({ env: config.env, organizations, credentials });
  const serviceKeys = createServiceKeyService({ env: config.env });
  const audit = createAuditService({ pool: deps.pool, log });
  const clusters = createClusterService({
    secrets: createSecretBox(key('cluster-kubeconfigs')), orchestrator: createClusterOrchestrator(deps.temporal), circuits: createCircuitService(), log,
  });
  const gateway = createInferenceGateway({ log, options: deps.inference });
  const inference = createInferenceService({
    // Waking is bounded by its deadline alone (core/workflow-calls.ts): this process probes Temporal only every 5 s, so
    // one missed probe would refuse wakes for that long, and the request is held for the wake anyway.
    clusters, gateway, orchestrator: createDeploymentOrchestrator(deps.temporal), database: dependencies, targetFreshMs: TARGET_FRESH_MS,
  });
  const counters = batchedCounters(deps.pool, { flushMs: RATE_COUNT_FLUSH_MS, onError: (error) => log.warn({ err: error }, 'rate-limit counts not written; kept for the next flush') });

  const routes = [...inferenceRoutes(inference), ...healthRoutes(dependencies, 'gateway'), ...observabilityRoutes(metrics)];
  const router = new Router<AppState>({ methods: METHODS });
  mountRoutes(router, routes, { idempotency: idempotency({ key: key('idempotency'), orm: deps.orm }), internalToken: config.metricsToken });
  const routeOf = declaredRouteOf(router);
  // Lookups of credentials fail at once while the database is away, so the cache answers what it knew.
  const guarded = <A extends unknown[], T>(lookup: (...args: A) => Promise<T>) => (...args: A) => dependencies.whileAvailable(() => lookup(...args));

  const app = new Koa<AppState>({ proxy: config.trustProxy });
  logAnswerFailures(app, log);
  app.use(requestContext({ log, orm: deps.orm, isProbe }));
  app.use(measureRequests(metrics, routeOf));
  app.use(auditTrail(audit, { writeBeforeAnswer: () => false }));
  app.use(errorHandler());
  app.use(authenticate({
    accessTokens: createAccessTokens(config.signingKey),
    serviceKeys: { recognizes: serviceKeys.recognizes, resolve: guarded(serviceKeys.resolve) },
    ...credentials.wrap({ apiKeys: { resolve: guarded(apiKeys.resolve) }, organizations: { access: guarded(organizations.access) } }),
  }));
  const { metricsToken } = config;
  app.use(rateLimit({
    counters, limits: deps.rateLimits,
    isInference: () => true,
    isHealthProbe: (path) => HEALTH_PATHS.has(path),
    isScraper: metricsToken === undefined ? undefined : (authorization) => metricsTokenMatches(authorization, metricsToken),
  }));
  app.use(router.routes());
  app.use(router.allowedMethods());

  return Object.assign(app, {
    start: () => dependencies.start(),
    async close() {
      gateway.close();
      await dependencies.stop();
      await Promise.allSettled([audit.close(), counters.close()]);
    },
  });
}
