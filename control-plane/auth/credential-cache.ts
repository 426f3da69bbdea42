// A short per-replica cache of resolved credentials (API key -> principal, user + organization -> access),
// so most requests skip the one or two lookups that authenticate them. An entry lives CREDENTIAL_CACHE_MS
// at most; a change made on this replica (a key revoked, rotated or edited, a membership or plan changed)
// calls forget() and drops the entries it touches at once. Other replicas see the change when their
// entries expire. Only successes are cached: a refused credential is looked up again every time.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from './principal.ts';
import { sha256 } from './tokens.ts';
import type { OrganizationAccess } from '../organizations/service.ts';

export const CREDENTIAL_CACHE_MS = 5_000;
/** Bounds memory when many credentials are in use; the oldest entries go first. */
const MAX_ENTRIES = 10_000;

interface Entry {
  expires: number;
  userId: string;
  organizationId: string;
  apiKeyId?: string;
  value: Principal | OrganizationAccess;
}

/** The lookups authenticate() makes, as the api-keys and organizations services provide them. */
export interface CredentialLookups {
  apiKeys: { resolve(em: EntityManager, value: string): Promise<Principal> };
  organizations: { access(em: EntityManager, userId: string, organizationId: string): Promise<OrganizationAccess | null> };
}

export interface Forget {
  apiKeyId?: string;
  userId?: string;
  organizationId?: string;
}

export interface CredentialCacheOptions {
  /** Told of each lookup: answered from the cache (hit) or loaded (miss), for Kiln's metrics. */
  observe?(result: 'hit' | 'miss'): void;
}

export function createCredentialCache(options: CredentialCacheOptions = {}) {
  const entries = new Map<string, Entry>();
  // Bumped by every forget(): a lookup that started before a change must not store what it read.
  let generation = 0;

  async function remember<T extends Principal | OrganizationAccess | null>(
    key: string, describe: (value: NonNullable<T>) => Omit<Entry, 'expires' | 'value'>, load: () => Promise<T>,
  ): Promise<T> {
    const hit = entries.get(key);
    if (hit && hit.expires > performance.now()) {
      options.observe?.('hit');
      return hit.value as T;
    }
    options.observe?.('miss');
    if (hit) entries.delete(key);
    const started = generation;
    const value = await load();
    if (value && started === generation) {
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
      entries.set(key, { expires: performance.now() + CREDENTIAL_CACHE_MS, ...describe(value as NonNullable<T>), value: value as NonNullable<T> });
    }
    return value;
  }

  return {
    /** Wraps the lookups authenticate() makes. */
    wrap(services: CredentialLookups): CredentialLookups {
      return {
        apiKeys: {
          // Keyed by the value's hash: no secret is kept in memory.
          resolve: (em: EntityManager, value: string) => remember<Principal>(
            `key:${sha256(value)}`,
            (p) => ({ userId: p.userId, organizationId: p.organizationId, apiKeyId: p.apiKeyId }),
            () => services.apiKeys.resolve(em, value),
          ),
        },
        organizations: {
          access: (em: EntityManager, userId: string, organizationId: string) => remember<OrganizationAccess | null>(
            `access:${userId}:${organizationId}`,
            () => ({ userId, organizationId }),
            () => services.organizations.access(em, userId, organizationId),
          ),
        },
      };
    },

    /** Drops every entry matching all the given fields (a key; a user's membership; a whole organization). */
    forget(what: Forget): void {
      generation++;
      for (const [key, entry] of entries) {
        if ((what.apiKeyId === undefined || entry.apiKeyId === what.apiKeyId)
          && (what.userId === undefined || entry.userId === what.userId)
          && (what.organizationId === undefined || entry.organizationId === what.organizationId)) entries.delete(key);
      }
    },
  };
}

export type CredentialCache = ReturnType<typeof createCredentialCache>;
