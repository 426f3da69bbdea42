// Costs: what deployments cost, from the catalog's prices and what Prometheus measured.
import { defineModule } from '../module.ts';
import { costRoutes } from './routes.ts';
import { createCostService, type CostService } from './service.ts';

declare module '../module.ts' {
  interface Services { costs: CostService }
}

export const costsModule = defineModule({
  name: 'costs',
  services: ({ services }) => ({ costs: createCostService({ prometheus: services.prometheus, models: services.models, clusters: services.clusters }) }),
  routes: ({ services }) => costRoutes(services.costs),
});
