// /v1/secrets: an organization's credentials (a Hugging Face token, object-store keys, a registry password).
// A value is taken once and never shown again; the list shows names, types and last four characters. Owners
// and admins hold secrets:read and secrets:write; deployments mount secrets by reference (deployments/).
import { defineRoute, pageReply, type Route } from '../http/routes.ts';
import { CreateSecretRequest, DeletedSecret, ListSecretsQuery, SecretIdParams, SecretTestResult, SecretView, TestSecretRequest } from './schemas.ts';
import type { SecretService } from './service.ts';

const common = { tag: 'Secrets', resourceType: 'secret' } as const;

export function secretRoutes(secrets: SecretService): Route[] {
  return [
    defineRoute({
      ...common, permission: 'secrets:read', method: 'GET', path: '/v1/secrets', operationId: 'listSecrets',
      summary: 'The organization\'s secrets, newest first: name, type, last four characters, created, last used and the deployments that mount each (never a value)',
      query: ListSecretsQuery, response: SecretView.array(), list: true,
      handle: async ({ query, state }) => pageReply(await secrets.list(state.em, state.principal!, query)),
    }),
    defineRoute({
      ...common, permission: 'secrets:write', method: 'POST', path: '/v1/secrets', operationId: 'createSecret',
      summary: 'Store a secret, sealed (AES-256-GCM); its value is never returned, here or later',
      body: CreateSecretRequest, response: SecretView, successStatus: 201, idempotent: true, errors: [409, 422],
      async handle({ body, state }) {
        const created = await secrets.create(state.em, state.principal!, body);
        state.resourceId = created.id;
        // The audit record names the secret; its value is in no record.
        state.auditDetails = { name: created.name, type: created.type };
        return { data: created };
      },
    }),
    defineRoute({
      ...common, permission: 'secrets:write', method: 'POST', path: '/v1/secrets/test', operationId: 'testSecret',
      summary: 'Ask the service a credential is for whether it accepts it (the Hub\'s whoami, an object store\'s listing, a registry\'s /v2/): '
        + 'a stored secret by id, or a credential given here, which is not stored. A refusal or an unreachable service is ok: false, with why',
      body: TestSecretRequest, response: SecretTestResult, errors: [404],
      async handle({ body, state }) {
        if ('secretId' in body) state.resourceId = body.secretId;
        const result = await secrets.test(state.em, state.principal!, body);
        state.auditDetails = { ...('type' in body ? { type: body.type } : {}), ok: result.ok, service: result.service };
        return { data: result };
      },
    }),
    defineRoute({
      ...common, permission: 'secrets:write', method: 'DELETE', path: '/v1/secrets/{id}', operationId: 'deleteSecret',
      summary: 'Delete a secret; 409 RESOURCE_IN_USE while a deployment that is not deleted mounts it',
      params: SecretIdParams, response: DeletedSecret, errors: [404, 409],
      async handle({ params, state }) {
        state.resourceId = params.id;
        return { data: await secrets.remove(state.em, state.principal!, params.id) };
      },
    }),
  ];
}
