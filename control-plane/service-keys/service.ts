// Service role keys: platform credentials for server-to-server calls, created, rotated and revoked by
// platform administrators. `srk_test_` / `srk_live_` + 40 Base62 characters, shown once, stored as a
// SHA-256 hash. A request with one acts on the organization it names, with everything an owner may do
// there plus platform administration, and bypasses row-level security.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { keyFormat, sha256 } from '../auth/tokens.ts';
import { newId } from '../../lib/ids.ts';
import type { Plan } from '../../catalog/plans.ts';
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../core/errors.ts';
import { ORGANIZATION_PERMISSIONS, type OrganizationPermission } from '../core/permissions.ts';
import { ServiceKeySchema, type ServiceKey } from './service-key.entity.ts';
import type { CreateServiceKeyInput, ServiceKeyViewBody } from './schemas.ts';

// A service key is no person: it has no profile to change, and makes no API keys (an API key acts as the
// member who made it, and the key's creator need not be a member of the organization acted on).
const SERVICE_PERMISSIONS: readonly OrganizationPermission[] = ORGANIZATION_PERMISSIONS
  .filter((p) => !['profile:read', 'profile:write', 'api-keys:write'].includes(p));

// Looks the key up and notes its use in one statement. The last use is kept to the minute, so a busy key's
// requests do not queue on its row.
const RESOLVE = `
  WITH k AS (SELECT id, created_by_id, last_used_at FROM service_key WHERE key_hash = ? AND revoked_at IS NULL),
  touched AS (
    UPDATE service_key s SET last_used_at = now() FROM k
    WHERE s.id = k.id AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute')
  )
  SELECT k.id, k.created_by_id, (SELECT plan FROM organization WHERE id = ?) AS plan FROM k`;

export function createServiceKeyService(deps: { env: 'development' | 'production' }) {
  const format = keyFormat(deps.env === 'production' ? 'srk_live_' : 'srk_test_', 40, 13);

  /** Only a person manages service keys: a leaked key must not mint successors that outlive its revocation. */
  function assertPerson(principal: Principal): void {
    if (principal.kind === 'service') throw new ForbiddenError('Service role keys are managed by a platform administrator, not with a service role key');
  }

  async function find(em: EntityManager, id: string): Promise<ServiceKey> {
    const key = await em.findOne(ServiceKeySchema, { id, revokedAt: null });
    if (!key) throw new NotFoundError('Service role key not found');
    return key;
  }

  return {
    async create(em: EntityManager, principal: Principal, input: CreateServiceKeyInput) {
      assertPerson(principal);
      const { value, ...secret } = format.issue();
      const key = em.create(ServiceKeySchema, { id: newId('svk'), name: input.name, createdBy: principal.userId, ...secret });
      await em.flush();
      return { ...view(key), key: value };
    },

    async list(em: EntityManager): Promise<ServiceKeyViewBody[]> {
      const keys = await em.find(ServiceKeySchema, { revokedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
      return keys.map(view);
    },

    /** A new value for the same key id; the old value stops working at once, on every replica (nothing is cached). */
    async rotate(em: EntityManager, principal: Principal, id: string) {
      assertPerson(principal);
      const key = await find(em, id);
      const { value, ...secret } = format.issue();
      Object.assign(key, secret, { rotatedAt: new Date() });
      await em.flush();
      return { ...view(key), key: value };
    },

    async revoke(em: EntityManager, principal: Principal, id: string): Promise<{ id: string; revoked: true }> {
      assertPerson(principal);
      const key = await find(em, id);
      key.revokedAt = new Date();
      await em.flush();
      return { id: key.id, revoked: true };
    },

    /** Whether a bearer value is meant as a service key (of either environment), so it is resolved here. */
    recognizes: (value: string): boolean => value.startsWith('srk_'),

    /**
     * The principal a key acts as in `organizationId`: an unknown, revoked or other-environment key is 401, an
     * unknown organization 404. Looked up on every request rather than cached, so a revocation or rotation
     * takes effect at once on every replica.
     */
    async resolve(em: EntityManager, value: string, organizationId: string): Promise<Principal> {
      if (!format.matches(value)) throw new UnauthenticatedError('Invalid API key');
      const [key] = await em.getConnection().execute<{ id: string; created_by_id: string; plan: Plan | null }[]>(RESOLVE, [sha256(value), organizationId]);
      if (!key) throw new UnauthenticatedError('Invalid API key');
      if (!key.plan) throw new NotFoundError('Organization not found (X-Organization-ID)');
      return {
        kind: 'service', userId: key.created_by_id, organizationId, plan: key.plan, role: 'owner', permissions: SERVICE_PERMISSIONS,
        scope: 'full_access', apiKeyId: key.id, platformAdmin: true,
      };
    },
  };
}

function view(key: ServiceKey): ServiceKeyViewBody {
  return {
    id: key.id, name: key.name, prefix: key.prefix, createdBy: key.createdBy.id, createdAt: key.createdAt.toISOString(),
    rotatedAt: key.rotatedAt?.toISOString() ?? null, lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
  };
}

export type ServiceKeyService = ReturnType<typeof createServiceKeyService>;
