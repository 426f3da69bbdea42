// The metric routes, read from Prometheus: one deployment's series, every deployment's series, and the
// organization's figures now.
import { defineRoute, type Route } from '../http/routes.ts';
import { DeploymentIdParams } from '../deployments/schemas.ts';
import { CurrentMetrics, CurrentMetricsQuery, DeploymentMetrics, MetricsRangeQuery, OrganizationMetrics, UsageAnalytics } from './schemas.ts';
import type { MonitoringService } from './service.ts';

export function monitoringRoutes(monitoring: MonitoringService): Route[] {
  const common = { tag: 'Monitoring', permission: 'deployments:read' } as const;
  return [
    defineRoute({
      ...common, resourceType: 'deployment', method: 'GET', path: '/v1/deployments/{id}/metrics', operationId: 'getDeploymentMetricsV1',
      summary: 'A deployment\'s requests/s, tokens/s, time to first token and latency percentiles, queue, KV cache, ready replicas and errors over a range',
      params: DeploymentIdParams, query: MetricsRangeQuery, response: DeploymentMetrics, errors: [404, 503],
      handle: async ({ params, query, state }) => ({ data: await monitoring.deploymentMetrics(state.em, state.principal!, params.id, query) }),
    }),
    defineRoute({
      ...common, resourceType: 'metrics', method: 'GET', path: '/v1/monitoring/metrics', operationId: 'getOrganizationMetricsV1',
      summary: 'The same series for each of the organization\'s live deployments over a range',
      query: MetricsRangeQuery, response: OrganizationMetrics, errors: [503],
      handle: async ({ query, state }) => ({ data: await monitoring.organizationMetrics(state.em, state.principal!, query) }),
    }),
    defineRoute({
      ...common, resourceType: 'analytics', method: 'GET', path: '/v1/monitoring/analytics', operationId: 'getUsageAnalyticsV1',
      summary: 'Inference requests and tokens over a range by deployment (with its p95 latency) and by API key',
      query: MetricsRangeQuery, response: UsageAnalytics, errors: [503],
      handle: async ({ query, state }) => ({ data: await monitoring.analytics(state.em, state.principal!, query) }),
    }),
    defineRoute({
      ...common, resourceType: 'metrics', method: 'GET', path: '/v1/metrics', operationId: 'getCurrentMetricsV1',
      summary: 'The organization\'s figures now (rates over the last minute): totals, and each live deployment\'s',
      query: CurrentMetricsQuery, response: CurrentMetrics, errors: [503],
      handle: async ({ state }) => ({ data: await monitoring.currentMetrics(state.em, state.principal!) }),
    }),
  ];
}
