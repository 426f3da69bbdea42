// GET /v1/models/search, GET /api/models, GET /v1/models/{id}, POST /v1/models/{id}/validate: the model
// catalog beside the organization's own models, read by anyone who may read the GPU catalog.
// PATCH and DELETE /v1/models/{id}: the organization's own models (models:write); catalog models are read-only.
import { z } from 'zod';
import { defineRoute, pageReply, type Route } from '../http/routes.ts';
import {
  DeletedModel, ListModelsQuery, ModelDetails, ModelDetailsQuery, ModelIdParams, ModelValidation, ModelView, SearchModelsQuery, UpdateModelRequest, ValidateModelRequest,
} from './schemas.ts';
import type { ModelService } from './service.ts';

export function modelRoutes(models: ModelService): Route[] {
  const common = { tag: 'Models', resourceType: 'model', permission: 'catalog:read' } as const;
  const list = (path: string, operationId: string, query: typeof SearchModelsQuery | typeof ListModelsQuery) => defineRoute({
    ...common, method: 'GET', path, operationId,
    summary: 'Search the model catalog and your organization\'s models (text, task, size, license, gated, fits a GPU type), cursor pages',
    query, response: z.array(ModelView), list: true,
    handle: async ({ query, state }) => pageReply(await models.search(state.em, state.principal!, query)),
  });
  return [
    list('/v1/models/search', 'searchModels', SearchModelsQuery),
    list('/api/models', 'listModels', ListModelsQuery),
    defineRoute({
      ...common, method: 'GET', path: '/v1/models/{id}', operationId: 'getModel',
      summary: 'A model\'s facts and, for each GPU type, the fewest GPUs per replica, the hourly price and a decoding speed band',
      params: ModelIdParams, query: ModelDetailsQuery, response: ModelDetails, errors: [404, 503],
      handle: async ({ params, query, state }) => ({ data: await models.details(state.em, state.principal!, params.id, query.contextLength) }),
    }),
    defineRoute({
      ...common, method: 'POST', path: '/v1/models/{id}/validate', operationId: 'validateModel',
      summary: 'Check a placement before deploying: source, architecture, context length, memory (with the arithmetic) and gated access; '
        + 'a model outside the catalog joins your organization\'s models when you may change them',
      params: ModelIdParams, body: ValidateModelRequest, response: ModelValidation, errors: [404, 503],
      handle: async ({ params, body, state }) => ({ data: await models.validate(state.em, state.principal!, params.id, body) }),
    }),
    defineRoute({
      ...common, permission: 'models:write', method: 'PATCH', path: '/v1/models/{id}', operationId: 'updateModel',
      summary: 'Change your organization\'s entry for a model: display name, description, default vLLM arguments and context length (catalog models are read-only: 403)',
      params: ModelIdParams, body: UpdateModelRequest, response: ModelView, errors: [403, 404, 422],
      async handle({ params, body, state }) {
        state.resourceId = params.id;
        return { data: await models.update(state.em, state.principal!, params.id, body) };
      },
    }),
    defineRoute({
      ...common, permission: 'models:write', method: 'DELETE', path: '/v1/models/{id}', operationId: 'deleteModel',
      summary: 'Remove a model from your organization\'s models (409 while a deployment uses it; catalog models are read-only: 403)',
      params: ModelIdParams, response: DeletedModel, errors: [403, 404, 409],
      async handle({ params, state }) {
        state.resourceId = params.id;
        return { data: await models.remove(state.em, state.principal!, params.id) };
      },
    }),
  ];
}
