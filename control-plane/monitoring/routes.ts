// GET /v1/deployments/{id}/metrics: a deployment's load, speed and health over a range, from Prometheus.
import { defineRoute, type Route } from '../http/routes.ts';
import { DeploymentIdParams } from '../deployments/schemas.ts';
import { DeploymentMetrics, DeploymentMetricsQuery } from './schemas.ts';
import type { MonitoringService } from './service.ts';

export function monitoringRoutes(monitoring: MonitoringService): Route[] {
  return [
    defineRoute({
      tag: 'Monitoring', resourceType: 'deployment', permission: 'deployments:read', method: 'GET', path: '/v1/deployments/{id}/metrics',
      operationId: 'getDeploymentMetricsV1',
      summary: 'A deployment\'s requests/s, tokens/s, time to first token and latency percentiles, queue, KV cache, ready replicas and errors over a range',
      params: DeploymentIdParams, query: DeploymentMetricsQuery, response: DeploymentMetrics, errors: [404, 503],
      handle: async ({ params, query, state }) => ({ data: await monitoring.deploymentMetrics(state.em, state.principal!, params.id, query) }),
    }),
  ];
}
