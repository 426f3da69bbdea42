// Every area of the API, in the order their services are built and started (a module may use the services of
// those above it; routes see them all); they stop in reverse. Adding an area: its folder with a module.ts, and
// one line here (its `*.entity.ts` files are found by name: database/entities.ts).
import { activityModule } from './activity/module.ts';
import { adminModule } from './admin/module.ts';
import { alertsModule } from './alerts/module.ts';
import { apiKeysModule } from './api-keys/module.ts';
import { assistantModule } from './assistant/module.ts';
import { auditModule } from './audit/module.ts';
import { authModule } from './auth/module.ts';
import { billingModule } from './billing/module.ts';
import { clustersModule } from './clusters/module.ts';
import { deploymentLogsModule } from './deployment-logs/module.ts';
import { deploymentsModule } from './deployments/module.ts';
import { docsSiteModule } from './docs-site/module.ts';
import { errorTrackerModule } from './error-tracker/module.ts';
import { featureFlagsModule } from './feature-flags/module.ts';
import { gpuTypesModule } from './gpu-types/module.ts';
import { graphqlModule } from './graphql/module.ts';
import { healthModule } from './health/module.ts';
import { idempotencyModule } from './idempotency/module.ts';
import { inferenceModule } from './inference/module.ts';
import { invoicesModule } from './invoices/module.ts';
import { liveUpdatesModule } from './live-updates/module.ts';
import { monitoringModule } from './monitoring/module.ts';
import { costsModule } from './costs/module.ts';
import { dashboardModule } from './dashboard/module.ts';
import { modelsModule } from './models/module.ts';
import type { ApiModule } from './module.ts';
import { notificationsModule } from './notifications/module.ts';
import { observabilityModule } from './observability/module.ts';
import { onboardingModule } from './onboarding/module.ts';
import { openApiModule } from './openapi/module.ts';
import { optimizationModule } from './optimization/module.ts';
import { organizationsModule } from './organizations/module.ts';
import { paymentsModule } from './payments/module.ts';
import { providersModule } from './providers/module.ts';
import { recoveryModule } from './recovery/module.ts';
import { reportsModule } from './reports/module.ts';
import { rolesModule } from './roles/module.ts';
import { secretsModule } from './secrets/module.ts';
import { serviceKeysModule } from './service-keys/module.ts';
import { settingsModule } from './settings/module.ts';
import { ssoModule } from './sso/module.ts';
import { teamModule } from './team/module.ts';
import { templatesModule } from './templates/module.ts';
import { webAppModule } from './web-app/module.ts';
import { webhooksModule } from './webhooks/module.ts';

export const API_MODULES: readonly ApiModule[] = [
  healthModule,
  observabilityModule,
  organizationsModule,
  authModule,
  apiKeysModule,
  serviceKeysModule,
  auditModule,
  errorTrackerModule,
  featureFlagsModule,
  idempotencyModule,
  recoveryModule,
  clustersModule,
  gpuTypesModule,
  modelsModule,
  alertsModule,
  deploymentsModule,
  inferenceModule,
  monitoringModule,
  costsModule,
  billingModule,
  invoicesModule,
  paymentsModule,
  optimizationModule,
  providersModule,
  dashboardModule,
  deploymentLogsModule,
  webhooksModule,
  secretsModule,
  ssoModule,
  settingsModule,
  teamModule,
  rolesModule,
  notificationsModule,
  activityModule,
  onboardingModule,
  liveUpdatesModule,
  templatesModule,
  reportsModule,
  graphqlModule,
  assistantModule,
  adminModule,
  openApiModule,
  docsSiteModule,
  webAppModule,
];
