// The dashboard's first screen: one answer from the database, the costs area and Prometheus.
import { defineModule } from '../module.ts';
import { dashboardRoutes } from './routes.ts';
import { createDashboardService, type DashboardService } from './service.ts';

declare module '../module.ts' {
  interface Services { dashboard: DashboardService }
}

export const dashboardModule = defineModule({
  name: 'dashboard',
  services: ({ services }) => ({ dashboard: createDashboardService({ prometheus: services.prometheus, costs: services.costs }) }),
  routes: ({ services }) => dashboardRoutes(services.dashboard),
});
