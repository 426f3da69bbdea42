// Platform administration: customers, audit, security, operations, flags, notifications, errors, reports.
import { defineModule } from '../module.ts';
import { adminRoutes } from './routes.ts';
import { createAdminService } from './service.ts';

export const adminModule = defineModule({
  name: 'admin',
  routes: ({ cursors, log, services, config }) => adminRoutes({
    admin: createAdminService({
      cursors, deployments: services.deployments, orchestrator: services.deploymentOrchestrator, log, temporalUiUrl: config.temporalUiUrl,
      openCircuits: async (em) => (await services.circuits.list(em)).filter((c) => c.state !== 'closed'),
    }),
    audit: services.auditQuery,
    featureFlags: services.featureFlagAdmin,
    notifications: services.notifications,
    errors: services.errorTracker,
    reports: services.reports,
  }),
});
