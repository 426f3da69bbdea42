// Deployments on both surfaces: the reference rows (GET/POST /v1/deployments) and the platform rows
// (/api/deployments and /api/deployments/{id}).
import { z } from 'zod';
import { defineRoute, pageReply, type Route } from '../http/routes.ts';
import type { DeploymentService } from './service.ts';
import {
  CreateDeploymentRequest, DeletedDeployment, DeploymentCreation, DeploymentActionRequest, DeploymentActionResult, DeploymentDryRun, DryRunQuery, DeploymentIdParams, DeploymentRules, DeploymentView,
  ListDeploymentsQuery, ListDeploymentsV1Query,
  ReplaceDeploymentRequest, UpdateDeploymentRequest,
} from './schemas.ts';

const common = { tag: 'Deployments', resourceType: 'deployment' } as const;

export function deploymentRoutes(deployments: DeploymentService): Route[] {
  const list = (path: string, operationId: string, query: typeof ListDeploymentsQuery | typeof ListDeploymentsV1Query) => defineRoute({
    ...common, permission: 'deployments:read', method: 'GET', path, operationId, summary: 'List deployments (cursor pagination, filters, sort)',
    query, response: z.array(DeploymentView), list: true,
    handle: async ({ query, state }) => pageReply(await deployments.list(state.em, state.principal!, query)),
  });
  const create = (path: string, operationId: string) => defineRoute({
    ...common, permission: 'deployments:write', method: 'POST', path, operationId, summary: 'Create a deployment (it starts as pending)',
    body: CreateDeploymentRequest, response: DeploymentCreation, successStatus: 201, errors: [402, 409, 422, 503],
    idempotent: { creates: 'Deployment', replay: async (id, state) => DeploymentCreation.parse({ ...await deployments.get(state.em, state.principal!, id), notices: [] }) },
    handle: async ({ body, state }) => ({ data: await deployments.create(state.em, state.principal!, body) }),
  });
  const update = (method: 'PATCH' | 'PUT', body: typeof UpdateDeploymentRequest | typeof ReplaceDeploymentRequest) => defineRoute({
    ...common, permission: 'deployments:write', method, path: '/api/deployments/{id}', operationId: method === 'PUT' ? 'replaceDeployment' : 'updateDeployment',
    summary: method === 'PUT' ? 'Replace a deployment\'s configuration' : 'Change part of a deployment\'s configuration',
    params: DeploymentIdParams, body, response: DeploymentView, errors: [402, 404, 409, 422, 503],
    // The fields it set, for the activity feed (activity/service.ts): names only, never their values.
    handle: async ({ params, body, state }) => ({
      data: await deployments.update(state.em, state.principal!, params.id, body, method === 'PUT'), auditDetails: { fields: Object.keys(body).sort() },
    }),
  });

  return [
    list('/v1/deployments', 'listDeploymentsV1', ListDeploymentsV1Query),
    create('/v1/deployments', 'createDeploymentV1'),
    list('/api/deployments', 'listDeployments', ListDeploymentsQuery),
    create('/api/deployments', 'createDeployment'),
    defineRoute({
      ...common, permission: 'deployments:read', method: 'GET', path: '/v1/deployments/validate', operationId: 'deploymentRulesV1',
      summary: 'The rules a creation request follows: name, model, replicas, sizing, GPU types available now, the caller\'s plan',
      response: DeploymentRules,
      handle: async ({ state }) => ({ data: await deployments.rules(state.em, state.principal!) }),
    }),
    defineRoute({
      ...common, permission: 'deployments:write', method: 'POST', path: '/v1/deployments/validate', operationId: 'validateDeploymentV1',
      summary: 'Dry run of a creation: every check with its reason, the cost, and the objects a real `pulumi preview` plans; creates nothing',
      query: DryRunQuery, body: CreateDeploymentRequest, response: DeploymentDryRun, errors: [503],
      handle: async ({ query, body, state }) => ({ data: await deployments.dryRun(state.em, state.principal!, body, query) }),
    }),
    defineRoute({
      ...common, permission: 'deployments:read', method: 'GET', path: '/api/deployments/{id}', operationId: 'getDeployment', summary: 'Read a deployment',
      params: DeploymentIdParams, response: DeploymentView, errors: [404],
      handle: async ({ params, state }) => ({ data: await deployments.get(state.em, state.principal!, params.id) }),
    }),
    update('PATCH', UpdateDeploymentRequest),
    update('PUT', ReplaceDeploymentRequest),
    defineRoute({
      ...common, permission: 'deployments:write', method: 'POST', path: '/v1/deployments/{id}/actions', operationId: 'deploymentActionV1',
      summary: 'Stop, start, restart or scale a deployment; answers at once with the new desired state',
      params: DeploymentIdParams, body: DeploymentActionRequest, response: DeploymentActionResult, errors: [402, 404, 409, 422],
      // Which action, for the activity feed (activity/service.ts): the audit record names only the route.
      handle: async ({ params, body, state }) => ({ data: await deployments.act(state.em, state.principal!, params.id, body), auditDetails: { ...body } }),
    }),
    defineRoute({
      ...common, permission: 'deployments:write', method: 'DELETE', path: '/api/deployments/{id}', operationId: 'deleteDeployment', summary: 'Delete a deployment',
      params: DeploymentIdParams, response: DeletedDeployment, errors: [404],
      handle: async ({ params, state }) => ({ data: await deployments.remove(state.em, state.principal!, params.id) }),
    }),
  ];
}
