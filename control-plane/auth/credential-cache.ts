// A short per-replica cache of resolved credentials (API key -> principal, user + organization -> access),
// so most requests skip the one or two lookups that authenticate them. An entry lives CREDENTIAL_CACHE_MS
// at most; a change made on this replica (a key revoked, rotated or edited, a membership or plan changed)
// calls forget() and drops the entries it touches at once. Other replicas see the change when their
// entries expire. Only successes are cached: a refused credential is looked up again every time. An entry
// used when past REFRESH_AFTER_MS is looked up again in the background (never more than one at a time), so
// a credential in steady use never makes a request wait for its lookup; the entry still lives no longer.
// The inference gateway, which serves while the database is away, keeps answering entries past their time
// then (staleWhileUnavailable): a revocation made during the outage is seen once the database answers.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError, DatabaseUnavailableError, ServiceUnavailableError } from '../core/errors.ts';
import type { Principal } from './principal.ts';
import { sha256 } from './tokens.ts';
import type { OrganizationAccess } from '../organizations/service.ts';

export const CREDENTIAL_CACHE_MS = 5_000;
/** An entry this old is reloaded in the background when used: the reload replaces it, or drops it when refused; a reload the database could not answer leaves it. */
export const REFRESH_AFTER_MS = 3_000;
/** Bounds memory when many credentials are in use; the oldest entries go first. */
const MAX_ENTRIES = 10_000;

interface Entry {
  loaded: number;
  expires: number;
  /** A background reload is under way. */
  refreshing?: boolean;
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
  /** The clock, in ms (tests); performance.now() by default. */
  now?(): number;
  /**
   * While `databaseAvailable()` says no, or a lookup fails with DatabaseUnavailableError, an entry loaded less than
   * `maxAgeMs` ago is answered though past its time. Unset (the API, which answers 503 then): never.
   */
  staleWhileUnavailable?: { databaseAvailable(): boolean; maxAgeMs: number };
}

export function createCredentialCache(options: CredentialCacheOptions = {}) {
  const entries = new Map<string, Entry>();
  // Bumped by every forget(): a lookup that started before a change must not store what it read.
  let generation = 0;

  const now = options.now ?? (() => performance.now());

  function store(key: string, fields: Omit<Entry, 'loaded' | 'expires' | 'value'>, value: Entry['value']): void {
    entries.delete(key);
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    const loaded = now();
    entries.set(key, { loaded, expires: loaded + CREDENTIAL_CACHE_MS, ...fields, value });
  }

  /** Reloads a used entry in the background: the result replaces it; a refusal or a failure drops it. */
  function refresh<T extends Principal | OrganizationAccess | null>(
    key: string, entry: Entry, describe: (value: NonNullable<T>) => Omit<Entry, 'loaded' | 'expires' | 'value'>, load: () => Promise<T>,
  ): void {
    entry.refreshing = true;
    const started = generation;
    // Started once the request that asked has moved on: building the lookup's query takes CPU it should not wait for.
    setImmediate(() => load().then((value) => {
      if (entries.get(key) !== entry) return; // forgotten or replaced meanwhile
      if (!value) entries.delete(key);
      // A change made meanwhile: what was read may predate it; the entry runs out as it would have.
      else if (started !== generation) entry.refreshing = false;
      else store(key, describe(value), value);
    }, (error: unknown) => {
      if (entries.get(key) !== entry) return;
      // Refused (a key revoked, a membership gone): dropped. Unanswered (the database away or failing): kept for
      // the rest of its time, and past it while the database is away where staleWhileUnavailable allows.
      if (error instanceof ApiError && !(error instanceof ServiceUnavailableError)) entries.delete(key);
      else entry.refreshing = false;
    }));
  }

  async function remember<T extends Principal | OrganizationAccess | null>(
    key: string, describe: (value: NonNullable<T>) => Omit<Entry, 'loaded' | 'expires' | 'value'>, load: () => Promise<T>,
  ): Promise<T> {
    const hit = entries.get(key);
    const at = now();
    const stale = options.staleWhileUnavailable;
    const servableStale = hit !== undefined && stale !== undefined && at - hit.loaded < stale.maxAgeMs;
    if (hit && (hit.expires > at || (servableStale && !stale.databaseAvailable()))) {
      options.observe?.('hit');
      if (!hit.refreshing && at - hit.loaded >= REFRESH_AFTER_MS && (stale?.databaseAvailable() ?? true)) refresh(key, hit, describe, load);
      return hit.value as T;
    }
    options.observe?.('miss');
    const started = generation;
    let value: T;
    try {
      value = await load();
    } catch (error) {
      // The database went away as the entry ran out: what it said last stands until it answers again.
      if (servableStale && error instanceof DatabaseUnavailableError && entries.get(key) === hit) return hit.value as T;
      if (hit && entries.get(key) === hit) entries.delete(key);
      throw error;
    }
    if (hit && entries.get(key) === hit) entries.delete(key);
    if (value && started === generation) store(key, describe(value), value);
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
