// GET /v1/deployments/{id}/pricing: what a deployment costs now, this month, per million tokens, and elsewhere.
import { defineRoute, type Route } from '../http/routes.ts';
import { DeploymentIdParams } from '../deployments/schemas.ts';
import { DeploymentPricing, PricingQuery } from './schemas.ts';
import type { CostService } from './service.ts';

export function costRoutes(costs: CostService): Route[] {
  return [
    defineRoute({
      tag: 'Costs', resourceType: 'deployment', permission: 'deployments:read', method: 'GET', path: '/v1/deployments/{id}/pricing',
      operationId: 'getDeploymentPricingV1',
      summary: 'What a deployment costs per hour now, spent and projected this month, per million tokens, and on every other GPU type that fits',
      params: DeploymentIdParams, query: PricingQuery, response: DeploymentPricing, errors: [404, 503],
      handle: async ({ params, state }) => ({ data: await costs.deploymentPricing(state.em, state.principal!, params.id) }),
    }),
  ];
}
