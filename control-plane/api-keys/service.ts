// API keys: `sk_test_` / `sk_live_` + 32 Base62 characters, shown once, stored as a SHA-256 hash.
// A key acts in its organization with its creator's role, narrowed by its scope.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { keyFormat, sha256 } from '../auth/tokens.ts';
import { newId } from '../../lib/ids.ts';
import { NotFoundError, UnauthenticatedError } from '../core/errors.ts';
import type { Scope } from '../core/permissions.ts';
import type { OrganizationService } from '../organizations/service.ts';
import { ApiKeySchema, type ApiKey } from './api-key.entity.ts';
import type { CredentialCache } from '../auth/credential-cache.ts';
import type { ApiKeyViewBody, CreateApiKeyInput, UpdateApiKeyInput } from './schemas.ts';


export interface ApiKeyServiceDeps {
  env: 'development' | 'production';
  organizations: Pick<OrganizationService, 'access'>;
  /** Told of every change to a key once it is saved, so this replica stops using the old one at once. */
  credentials: Pick<CredentialCache, 'forget'>;
}

export function createApiKeyService(deps: ApiKeyServiceDeps) {
  const envPrefix = deps.env === 'production' ? 'sk_live_' : 'sk_test_';
  const format = keyFormat(envPrefix, 32, 12);

  async function find(em: EntityManager, principal: Principal, id: string): Promise<ApiKey> {
    const key = await em.findOne(ApiKeySchema, { id, organization: principal.organizationId, revokedAt: null });
    if (!key) throw new NotFoundError('API key not found');
    return key;
  }

  return {
    async create(em: EntityManager, principal: Principal, input: CreateApiKeyInput) {
      const { value, ...stored } = format.issue();
      const key = em.create(ApiKeySchema, {
        id: newId('key'), organization: principal.organizationId, user: principal.userId, name: input.name, scope: input.scope, ...stored,
      });
      await em.flush();
      return { ...view(key), key: value };
    },

    async list(em: EntityManager, principal: Principal): Promise<ApiKeyViewBody[]> {
      const keys = await em.find(ApiKeySchema, { organization: principal.organizationId, revokedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
      return keys.map(view);
    },

    async update(em: EntityManager, principal: Principal, input: UpdateApiKeyInput): Promise<ApiKeyViewBody> {
      const key = await find(em, principal, input.id);
      if (input.name !== undefined) key.name = input.name;
      if (input.scope !== undefined) key.scope = input.scope;
      await em.flush();
      deps.credentials.forget({ apiKeyId: key.id });
      return view(key);
    },

    /** A new value for the same key id; the old value stops working at once. */
    async rotate(em: EntityManager, principal: Principal, id: string) {
      const key = await find(em, principal, id);
      const { value, ...stored } = format.issue();
      Object.assign(key, stored);
      key.rotatedAt = new Date();
      await em.flush();
      deps.credentials.forget({ apiKeyId: key.id });
      return { ...view(key), key: value };
    },

    async revoke(em: EntityManager, principal: Principal, id: string): Promise<{ id: string; revoked: true }> {
      const key = await find(em, principal, id);
      key.revokedAt = new Date();
      await em.flush();
      deps.credentials.forget({ apiKeyId: key.id });
      return { id: key.id, revoked: true };
    },

    /**
     * The principal a key value stands for; any unknown, revoked or other-environment key is 401. Runs on
     * every request made with a key, so it reads plain rows rather than hydrating entities.
     */
    async resolve(em: EntityManager, value: string): Promise<Principal> {
      if (!format.matches(value)) throw new UnauthenticatedError('Invalid API key');
      const key = await em.createQueryBuilder(ApiKeySchema, 'k')
        .select(['k.id', 'k.scope', 'k.user', 'k.organization'])
        .where({ keyHash: sha256(value), revokedAt: null })
        .execute<{ id: string; scope: Scope; user: string; organization: string } | undefined>('get');
      if (!key) throw new UnauthenticatedError('Invalid API key');
      const access = await deps.organizations.access(em, key.user, key.organization);
      if (!access) throw new UnauthenticatedError('Invalid API key');
      return {
        kind: 'api_key', userId: key.user, organizationId: key.organization,
        plan: access.plan, role: access.role, permissions: access.permissions, scope: key.scope, apiKeyId: key.id, platformAdmin: access.platformAdmin,
      };
    },
  };
}

function view(key: ApiKey): ApiKeyViewBody {
  return {
    id: key.id, name: key.name, scope: key.scope, prefix: key.prefix,
    createdAt: key.createdAt.toISOString(), lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
