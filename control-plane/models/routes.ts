// GET /v1/models/search, GET /api/models, GET /v1/models/{id}, POST /v1/models/{id}/validate: the model
// catalog, read by anyone who may read the GPU catalog.
import { z } from 'zod';
import { defineRoute, pageReply, type Route } from '../http/routes.ts';
import { ListModelsQuery, ModelDetails, ModelDetailsQuery, ModelIdParams, ModelValidation, ModelView, SearchModelsQuery, ValidateModelRequest } from './schemas.ts';
import type { ModelService } from './service.ts';

export function modelRoutes(models: ModelService): Route[] {
  const common = { tag: 'Models', resourceType: 'model', permission: 'catalog:read' } as const;
  const list = (path: string, operationId: string, query: typeof SearchModelsQuery | typeof ListModelsQuery) => defineRoute({
    ...common, method: 'GET', path, operationId, summary: 'Search the model catalog (text, task, size, license, gated, fits a GPU type), cursor pages',
    query, response: z.array(ModelView), list: true,
    handle: async ({ query }) => pageReply(models.search(query)),
  });
  return [
    list('/v1/models/search', 'searchModels', SearchModelsQuery),
    list('/api/models', 'listModels', ListModelsQuery),
    defineRoute({
      ...common, method: 'GET', path: '/v1/models/{id}', operationId: 'getModel',
      summary: 'A model\'s facts and, for each GPU type, the fewest GPUs per replica, the hourly price and a decoding speed band',
      params: ModelIdParams, query: ModelDetailsQuery, response: ModelDetails, errors: [404],
      handle: async ({ params, query }) => ({ data: models.details(params.id, query.contextLength) }),
    }),
    defineRoute({
      ...common, method: 'POST', path: '/v1/models/{id}/validate', operationId: 'validateModel',
      summary: 'Check a placement before deploying: source, architecture, context length, memory (with the arithmetic) and gated access',
      params: ModelIdParams, body: ValidateModelRequest, response: ModelValidation, errors: [404],
      handle: async ({ params, body }) => ({ data: models.validate(params.id, body) }),
    }),
  ];
}
