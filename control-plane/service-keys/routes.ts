// /v1/admin/service-keys: service role keys, for platform administrators only (admin:*): create (value
// shown once), list (never the values), rotate (new value shown once), revoke.
import { z } from 'zod';
import { defineRoute, type Route } from '../http/routes.ts';
import type { ServiceKeyService } from './service.ts';
import { CreateServiceKeyRequest, RevokedServiceKey, ServiceKeyIdParams, ServiceKeyView, ServiceKeyWithValue } from './schemas.ts';

const common = { tag: 'Administration', resourceType: 'service_key' } as const;

export function serviceKeyRoutes(serviceKeys: ServiceKeyService): Route[] {
  return [
    defineRoute({
      ...common, permission: 'admin:write', method: 'POST', path: '/v1/admin/service-keys', operationId: 'createServiceKey',
      summary: 'Create a service role key (server-to-server; the value is shown once)',
      body: CreateServiceKeyRequest, response: ServiceKeyWithValue, successStatus: 201, idempotent: true, errors: [422],
      handle: async ({ body, state }) => ({ data: await serviceKeys.create(state.em, state.principal!, body) }),
    }),
    defineRoute({
      ...common, permission: 'admin:read', method: 'GET', path: '/v1/admin/service-keys', operationId: 'listServiceKeys',
      summary: 'List service role keys that are not revoked, with their last use (never their values)',
      response: z.array(ServiceKeyView),
      handle: async ({ state }) => ({ data: await serviceKeys.list(state.em) }),
    }),
    defineRoute({
      ...common, permission: 'admin:write', method: 'POST', path: '/v1/admin/service-keys/{id}/rotate', operationId: 'rotateServiceKey',
      summary: 'Rotate a service role key: a new value (shown once); the old one stops working at once',
      params: ServiceKeyIdParams, response: ServiceKeyWithValue, errors: [404],
      handle: async ({ params, state }) => ({ data: await serviceKeys.rotate(state.em, state.principal!, params.id) }),
    }),
    defineRoute({
      ...common, permission: 'admin:write', method: 'DELETE', path: '/v1/admin/service-keys/{id}', operationId: 'revokeServiceKey',
      summary: 'Revoke a service role key',
      params: ServiceKeyIdParams, response: RevokedServiceKey, errors: [404],
      handle: async ({ params, state }) => ({ data: await serviceKeys.revoke(state.em, state.principal!, params.id) }),
    }),
  ];
}
