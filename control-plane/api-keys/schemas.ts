import { z } from 'zod';
import { optionalOrgIdQuery, orgIdQuery } from '../core/organization-query.ts';
import { SCOPES } from '../core/permissions.ts';

const name = z.string().trim().min(1).max(100);
const scope = z.enum(SCOPES).meta({ description: 'full_access, deployments_only or read_only.' });
const id = z.string().min(1).max(64).meta({ example: 'key_0123456789abcdefghij' });

export const CreateApiKeyRequest = z.object({ name, scope }).meta({ id: 'CreateApiKeyRequest' });
export const UpdateApiKeyRequest = z.object({ id, name: name.optional(), scope: scope.optional() }).meta({ id: 'UpdateApiKeyRequest' });
export const RotateApiKeyRequest = z.object({ id }).meta({ id: 'RotateApiKeyRequest' });
const byQueryOrBody = 'The key to revoke: in the query or in the JSON body (either; both must agree).';
export const RevokeApiKeyQuery = z.object({ id: id.optional().meta({ description: byQueryOrBody }), ...optionalOrgIdQuery });
export const RevokeApiKeyRequest = z.strictObject({ id: id.optional().meta({ description: byQueryOrBody }) }).meta({ id: 'RevokeApiKeyRequest' });
export const ListApiKeysQuery = z.object(orgIdQuery);

export const ApiKeyView = z.object({
  id: z.string(),
  name: z.string(),
  scope,
  prefix: z.string().meta({ example: 'sk_test_Ab3d' }),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime().nullable(),
}).meta({ id: 'ApiKey' });

export const ApiKeyWithValue = ApiKeyView.extend({
  key: z.string().meta({ description: 'The full value: shown once, never again.', example: 'sk_test_0123456789abcdefghijABCDEFGHIJKL' }),
}).meta({ id: 'ApiKeyWithValue' });

export const RevokedApiKey = z.object({ id: z.string(), revoked: z.literal(true) }).meta({ id: 'RevokedApiKey' });

export type CreateApiKeyInput = z.infer<typeof CreateApiKeyRequest>;
export type UpdateApiKeyInput = z.infer<typeof UpdateApiKeyRequest>;
export type ApiKeyViewBody = z.infer<typeof ApiKeyView>;
