// GET /v1/deployments/{id}/optimization: recommendations from measured load; POST applies one; PUT sets the policy.
import { defineRoute, type Route } from '../http/routes.ts';
import { DeploymentIdParams } from '../deployments/schemas.ts';
import {
  AppliedRecommendation, ApplyRecommendationRequest, DeploymentOptimization, OptimizationPolicyRequest, OptimizationPolicyView, OptimizationQuery,
} from './schemas.ts';
import type { OptimizationService } from './service.ts';

export function optimizationRoutes(optimization: OptimizationService): Route[] {
  const common = { tag: 'Optimization', resourceType: 'deployment', path: '/v1/deployments/{id}/optimization', params: DeploymentIdParams } as const;
  return [
    defineRoute({
      ...common, permission: 'deployments:read', method: 'GET', operationId: 'getDeploymentOptimizationV1',
      summary: 'Recommendations from the deployment\'s load over the last hour, each with its evidence and its effect on cost and latency, and its policy',
      query: OptimizationQuery, response: DeploymentOptimization, errors: [404, 503],
      handle: async ({ params, state }) => ({ data: await optimization.get(state.em, state.principal!, params.id) }),
    }),
    defineRoute({
      ...common, permission: 'deployments:write', method: 'POST', operationId: 'applyDeploymentOptimizationV1',
      summary: 'Apply one of the deployment\'s current recommendations: a change of its desired state, sent to its workflow',
      body: ApplyRecommendationRequest, response: AppliedRecommendation, errors: [402, 404, 409, 422, 503],
      handle: async ({ params, body, state }) => ({ data: await optimization.apply(state.em, state.principal!, params.id, body.recommendation) }),
    }),
    defineRoute({
      ...common, permission: 'deployments:write', method: 'PUT', operationId: 'setDeploymentOptimizationPolicyV1',
      summary: 'Set the deployment\'s optimization policy: p95 time-to-first-token target, cost ceiling, auto-apply',
      body: OptimizationPolicyRequest, response: OptimizationPolicyView, errors: [404, 422],
      handle: async ({ params, body, state }) => ({ data: await optimization.setPolicy(state.em, state.principal!, params.id, body) }),
    }),
  ];
}
