// GET /v1/deployments/{id}/logs: a deployment's pods' logs from its cluster, as JSON or followed as events.
import { defineRoute, type Route } from '../http/routes.ts';
import { DeploymentIdParams } from '../deployments/schemas.ts';
import { DeploymentLogStreams, DeploymentLogsQuery } from './schemas.ts';
import type { DeploymentLogsService } from './service.ts';

export function deploymentLogRoutes(logs: DeploymentLogsService): Route[] {
  return [
    defineRoute({
      tag: 'Monitoring', resourceType: 'deployment', permission: 'deployments:read', method: 'GET', path: '/v1/deployments/{id}/logs',
      operationId: 'getDeploymentLogsV1',
      summary: 'A deployment\'s pods\' logs (vLLM\'s own lines and its access log), newest last; with follow=true, new lines as server-sent events',
      params: DeploymentIdParams, query: DeploymentLogsQuery, streams: DeploymentLogStreams, errors: [404, 422, 503],
      async handle({ params, query, state, signal }) {
        const target = await logs.target(state.em, state.principal!, params.id);
        return logs.logs(target, query, signal);
      },
    }),
  ];
}
