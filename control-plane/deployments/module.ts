// Deployments: what users ask to run. The API records the desired state; workflows make it so.
import { defineModule } from '../module.ts';
import { createDesiredStateDelivery } from './desired-state-delivery.ts';
import { deploymentRoutes } from './routes.ts';
import { createDeploymentService, type DeploymentService } from './service.ts';

declare module '../module.ts' {
  interface Services { deployments: DeploymentService }
}

export const deploymentsModule = defineModule({
  name: 'deployments',
  services: ({ config, cursors, orchestrator, log, services }) => ({
    deployments: createDeploymentService({
      endpointDomain: config.endpointDomain,
      cursors,
      orchestrator,
      placement: services.clusters,
      delivery: createDesiredStateDelivery({ orchestrator, log }),
      flags: services.featureFlags,
      budgets: services.budgets,
      models: services.models,
    }),
  }),
  routes: ({ services }) => deploymentRoutes(services.deployments),
});
