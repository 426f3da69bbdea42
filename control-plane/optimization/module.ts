// Optimization: recommendations from a deployment's measured load, applying them, and the deployment's policy.
import { defineModule } from '../module.ts';
import { optimizationRoutes } from './routes.ts';
import { createOptimizationService, type OptimizationService } from './service.ts';

declare module '../module.ts' {
  interface Services { optimization: OptimizationService }
}

export const optimizationModule = defineModule({
  name: 'optimization',
  services: ({ services }) => ({
    optimization: createOptimizationService({ prometheus: services.prometheus, costs: services.costs, deployments: services.deployments }),
  }),
  routes: ({ services }) => optimizationRoutes(services.optimization),
});
