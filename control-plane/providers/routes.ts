// POST /v1/providers/compare-costs: a model or a GPU requirement priced on each provider's GPU offers.
import { defineRoute, type Route } from '../http/routes.ts';
import { CompareCostsRequest, CostComparison } from './schemas.ts';
import type { ProviderService } from './service.ts';

export function providerRoutes(providers: ProviderService): Route[] {
  return [
    defineRoute({
      tag: 'Costs', resourceType: 'gpu_offer', permission: 'catalog:read', method: 'POST', path: '/v1/providers/compare-costs', operationId: 'compareProviderCostsV1',
      summary: 'A model (sized by the fit rules) or a GPU requirement on each provider\'s GPU offers and Kiln\'s GPU types: hourly cost, and per million tokens where Kiln measured the throughput',
      body: CompareCostsRequest, response: CostComparison, errors: [404, 422],
      handle: async ({ body, state }) => ({ data: await providers.compare(state.em, state.principal!, body) }),
    }),
  ];
}
