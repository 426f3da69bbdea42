// GET /v1/dashboard/metrics: what a dashboard's first screen shows.
import { defineRoute, type Route } from '../http/routes.ts';
import { DashboardMetrics, DashboardQuery } from './schemas.ts';
import type { DashboardService } from './service.ts';

export function dashboardRoutes(dashboard: DashboardService): Route[] {
  return [
    defineRoute({
      tag: 'Monitoring', resourceType: 'metrics', permission: 'deployments:read', method: 'GET', path: '/v1/dashboard/metrics', operationId: 'getDashboardMetricsV1',
      summary: 'Deployments by status, spend today and this month, tokens today, and the slowest deployments',
      query: DashboardQuery, response: DashboardMetrics, errors: [503],
      handle: async ({ state }) => ({ data: await dashboard.metrics(state.em, state.principal!) }),
    }),
  ];
}
