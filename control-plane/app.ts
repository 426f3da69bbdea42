// The Koa application, built from explicit dependencies (no globals), so tests and the bench build it
// against their own database.
import { recoveryRoutes } from './recovery/routes.ts';
import { createCircuitService } from './recovery/circuits.ts';
import type { ClusterOrchestrator } from './clusters/orchestrator.ts';
import { clusterRoutes } from './clusters/routes.ts';
import { createClusterService } from './clusters/service.ts';
import { createSecretBox } from './auth/secret-box.ts';
import { createWebhookService } from './webhooks/service.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { join } from 'node:path';
import Koa from 'koa';
import Router from '@koa/router';
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { apiKeyRoutes } from './api-keys/routes.ts';
import { createApiKeyService } from './api-keys/service.ts';
import { createAuditService } from './audit/service.ts';
import { createAnalyticsService } from './audit/analytics.ts';
import { createAuditQueryService } from './audit/query.ts';
import { auditRoutes } from './audit/routes.ts';
import { deriveKey } from './auth/keys.ts';
import { authRoutes } from './auth/routes.ts';
import { createAuthService } from './auth/service.ts';
import { createAccessTokens } from './auth/tokens.ts';
import { deploymentRoutes } from './deployments/routes.ts';
import { createDeploymentService } from './deployments/service.ts';
import { createDesiredStateDelivery } from './deployments/desired-state-delivery.ts';
import type { DeploymentOrchestrator } from './deployments/orchestrator.ts';
import { gpuTypeRoutes } from './gpu-types/routes.ts';
import { healthRoutes } from './health/routes.ts';
import { auditTrail } from './http/audit.ts';
import { authenticate } from './http/authenticate.ts';
import { createCredentialCache } from './auth/credential-cache.ts';
import type { AppState } from './http/context.ts';
import { errorHandler } from './http/error-handler.ts';
import { idempotency } from './idempotency/middleware.ts';
import { openApiRoutes } from './http/openapi-routes.ts';
import { createCursorCodec } from './core/pagination.ts';
import { type PlanLimit, rateLimit, signinFailureLimiter } from './http/rate-limit.ts';
import { requestContext } from './http/request-context.ts';
import { mountRoutes, type Route } from './http/routes.ts';
import type { Plan } from './organizations/organization.entity.ts';
import { createOrganizationService } from './organizations/service.ts';
import { ssoRoutes } from './sso/routes.ts';
import { createSsoService } from './sso/service.ts';
import type { Mailer } from './mail/mailer.ts';
import { settingsRoutes } from './settings/routes.ts';
import { createSettingsService } from './settings/service.ts';
import { teamRoutes } from './team/routes.ts';
import { createTeamService } from './team/service.ts';
import { roleRoutes } from './roles/routes.ts';
import { createRoleService } from './roles/service.ts';
import { adminRoutes } from './admin/routes.ts';
import { createAdminService } from './admin/service.ts';
import { createNotificationService } from './notifications/service.ts';
import { createErrorTracker } from './error-tracker/service.ts';
import { createFeatureFlags } from './feature-flags/flags.ts';
import { createFeatureFlagService } from './feature-flags/service.ts';
import type { ReportOrchestrator } from './reports/orchestrator.ts';
import { createReportService } from './reports/service.ts';
import { createInferenceGateway, type InferenceGatewayOptions } from './inference/gateway.ts';
import { inferenceRoutes } from './inference/routes.ts';
import { createInferenceService } from './inference/service.ts';

export interface AppDeps {
  config: Pick<Config, 'env' | 'signingKey' | 'endpointDomain' | 'trustProxy' | 'adminEmails' | 'dataDir' | 'errorTrackerUrl'>;
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

/** The Koa application, and what must happen when it stops. */
export type KilnApp = Koa<AppState> & {
  /** Stops the inference gateway's pod watches and writes the audit records still queued. Call once the server stopped answering, before the database closes. */
  close(): Promise<void>;
};

export function createApp(deps: AppDeps): KilnApp {
  const accessTokens = createAccessTokens(deps.config.signingKey);
  const organizations = createOrganizationService({ adminEmails: deps.config.adminEmails });
  const credentials = createCredentialCache();
  const apiKeys = createApiKeyService({ env: deps.config.env, organizations, credentials });
  const audit = createAuditService({ pool: deps.pool, log: deps.log });
  const auth = createAuthService({ accessTokens, organizations, signinFailures: signinFailureLimiter(deps.pool) });
  const circuits = createCircuitService();
  const clusters = createClusterService({
    secrets: createSecretBox(deriveKey(deps.config.signingKey, 'cluster-kubeconfigs')),
    orchestrator: deps.clusterOrchestrator,
    circuits,
    log: deps.log,
  });
  const cursors = createCursorCodec(deriveKey(deps.config.signingKey, 'cursor'));
  // The one reader of feature flags (flags.ts): services that branch on a flag take it as a dependency.
  const featureFlags = createFeatureFlags();
  const deployments = createDeploymentService({
    endpointDomain: deps.config.endpointDomain,
    cursors,
    orchestrator: deps.orchestrator,
    placement: clusters,
    delivery: createDesiredStateDelivery({ orchestrator: deps.orchestrator, log: deps.log }),
    flags: featureFlags,
  });
  const errorTracker = createErrorTracker({ orm: deps.orm, log: deps.log, cursors, forwardUrl: deps.config.errorTrackerUrl, environment: deps.config.env });

  const auditQuery = createAuditQueryService({ cursors });
  const inferenceGateway = createInferenceGateway({ log: deps.log, options: deps.inference });

  const routes: Route[] = [
    ...healthRoutes(deps.orm),
    ...authRoutes(auth),
    ...apiKeyRoutes(apiKeys),
    ...deploymentRoutes(deployments),
    ...recoveryRoutes(deployments, circuits),
    ...inferenceRoutes(createInferenceService({ clusters, gateway: inferenceGateway })),
    ...clusterRoutes(clusters),
    ...gpuTypeRoutes(clusters),
    ...webhookRoutes(createWebhookService({
      secrets: createSecretBox(deriveKey(deps.config.signingKey, 'webhook-secrets')),
      allowPrivateUrls: deps.config.env !== 'production',
    })),
    ...ssoRoutes(createSsoService({
      secrets: createSecretBox(deriveKey(deps.config.signingKey, 'sso-secrets')),
      auth,
      allowPrivateIssuers: deps.config.env !== 'production',
    })),
    ...settingsRoutes(createSettingsService(deps.mail)),
    ...teamRoutes(createTeamService({ ...deps.mail, auth })),
    ...roleRoutes(createRoleService({ credentials })),
    ...auditRoutes(
      auditQuery,
      createAnalyticsService({ mutatingActions: () => routes.filter((r) => r.method !== 'GET').map((r) => r.operationId) }),
    ),
    ...adminRoutes({
      admin: createAdminService({
        cursors, deployments, orchestrator: deps.orchestrator, log: deps.log,
        openCircuits: async (em) => (await circuits.list(em)).filter((c) => c.state !== 'closed'),
      }),
      audit: auditQuery,
      featureFlags: createFeatureFlagService({ flags: featureFlags }),
      notifications: createNotificationService({ cursors }),
      errors: errorTracker,
      reports: createReportService({ dir: join(deps.config.dataDir, 'reports'), orchestrator: deps.reports, log: deps.log }),
    }),
  ];
  routes.push(...openApiRoutes(() => routes));

  const router = new Router<AppState>();
  mountRoutes(router, routes, { idempotency: idempotency({ key: deriveKey(deps.config.signingKey, 'idempotency') }) });

  const app = new Koa<AppState>({ proxy: deps.config.trustProxy });
  // Failures once an answer has started (a streamed body breaking off, a client leaving mid-download)
  // reach Koa's error event, not the error handler: into the structured log, not stderr.
  app.on('error', (error: NodeJS.ErrnoException, ctx?: Koa.ParameterizedContext<AppState>) => {
    const log = ctx?.state.log ?? deps.log;
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE' || error.code === 'ECONNRESET') log.info({ err: error }, 'client closed the connection mid-answer');
    else log.error({ err: error }, 'answer failed after it started');
  });
  app.use(requestContext({ log: deps.log, orm: deps.orm }));
  app.use(auditTrail(audit));
  app.use(errorHandler({ onUnhandled: (error, context) => errorTracker.capture(error, context) }));
  app.use(authenticate({ accessTokens, ...credentials.wrap({ apiKeys, organizations }) }));
  app.use(rateLimit({ pool: deps.pool, limits: deps.rateLimits }));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return Object.assign(app, {
    close: async () => {
      inferenceGateway.close();
      await audit.close();
    },
  });
}
