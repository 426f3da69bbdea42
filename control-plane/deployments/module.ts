// Deployments: what users ask to run. The API records the desired state; workflows make it so. The module
// builds the orchestrator that sends it (other areas signal and inspect workflows through it) and runs the
// redelivery loop, which sends what was saved while Temporal was away.
import { defineModule } from '../module.ts';
import { createDesiredStateDelivery } from './desired-state-delivery.ts';
import { createDeploymentOrchestrator, type DeploymentOrchestrator } from './orchestrator.ts';
import { deploymentRoutes } from './routes.ts';
import { createDeploymentService, type DeploymentService } from './service.ts';
import type { Periodic } from '../../lib/periodic.ts';

declare module '../module.ts' {
  interface Services {
    deployments: DeploymentService;
    /** Sends deployments' desired state to their workflows, signals them (wake) and inspects them. */
    deploymentOrchestrator: DeploymentOrchestrator;
    /** Changes saved while Temporal was unreachable reach their workflows once it answers again. */
    desiredStateRedelivery: Periodic;
  }
}

export const deploymentsModule = defineModule({
  name: 'deployments',
  services: ({ config, cursors, temporal, previewTimeoutMs, orm, log, services }) => {
    const orchestrator = createDeploymentOrchestrator(temporal, { previewTimeoutMs, temporalAvailable: () => services.dependencies.temporalAvailable() });
    const delivery = createDesiredStateDelivery({ orchestrator, log });
    return {
      deploymentOrchestrator: orchestrator,
      desiredStateRedelivery: delivery.loop(orm),
      deployments: createDeploymentService({
        endpointDomain: config.endpointDomain,
        cursors,
        orchestrator,
        placement: services.clusters,
        delivery,
        flags: services.featureFlags,
        budgets: services.budgets,
        models: services.models,
      }),
    };
  },
  routes: ({ services }) => deploymentRoutes(services.deployments),
  start: ({ services }) => services.desiredStateRedelivery.start(),
  close: ({ desiredStateRedelivery }) => desiredStateRedelivery.stop(),
});
