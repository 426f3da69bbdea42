// /v1/settings/api-keys: create (value shown once), list, edit, rotate, revoke.
import { z } from 'zod';
import { defineRoute, type Route } from '../http/routes.ts';
import { queryOrBodyField } from '../http/validate.ts';
import type { ApiKeyService } from './service.ts';
import {
  ApiKeyView, ApiKeyWithValue, CreateApiKeyRequest, ListApiKeysQuery, RevokeApiKeyQuery, RevokeApiKeyRequest, RevokedApiKey, RotateApiKeyRequest, UpdateApiKeyRequest,
} from './schemas.ts';

const common = { tag: 'API keys', resourceType: 'api_key', path: '/v1/settings/api-keys' } as const;

export function apiKeyRoutes(apiKeys: ApiKeyService): Route[] {
  return [
    defineRoute({
      ...common, permission: 'api-keys:write', method: 'POST', operationId: 'createApiKey', summary: 'Create an API key (the value is shown once)',
      body: CreateApiKeyRequest, response: ApiKeyWithValue, successStatus: 201, idempotent: true, errors: [422],
      handle: async ({ body, state }) => ({ data: await apiKeys.create(state.em, state.principal!, body) }),
    }),
    defineRoute({
      ...common, permission: 'api-keys:read', method: 'GET', operationId: 'listApiKeys', summary: 'List API keys (never their values)',
      query: ListApiKeysQuery, response: z.array(ApiKeyView),
      handle: async ({ state }) => ({ data: await apiKeys.list(state.em, state.principal!) }),
    }),
    defineRoute({
      ...common, permission: 'api-keys:write', method: 'PATCH', operationId: 'updateApiKey', summary: 'Rename an API key or change its scope',
      body: UpdateApiKeyRequest, response: ApiKeyView, errors: [404, 422],
      async handle({ body, state }) {
        state.resourceId = body.id;
        return { data: await apiKeys.update(state.em, state.principal!, body) };
      },
    }),
    defineRoute({
      ...common, permission: 'api-keys:write', method: 'PUT', operationId: 'rotateApiKey', summary: 'Rotate an API key (the new value is shown once)',
      body: RotateApiKeyRequest, response: ApiKeyWithValue, errors: [404],
      async handle({ body, state }) {
        state.resourceId = body.id;
        return { data: await apiKeys.rotate(state.em, state.principal!, body.id) };
      },
    }),
    defineRoute({
      ...common, permission: 'api-keys:write', method: 'DELETE', operationId: 'revokeApiKey', summary: 'Revoke an API key',
      query: RevokeApiKeyQuery, body: RevokeApiKeyRequest, optionalBody: true, response: RevokedApiKey, errors: [404],
      async handle({ query, body, state }) {
        const id = queryOrBodyField('id', query.id, body.id);
        state.resourceId = id;
        return { data: await apiKeys.revoke(state.em, state.principal!, id) };
      },
    }),
  ];
}
