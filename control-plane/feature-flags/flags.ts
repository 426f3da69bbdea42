// The one way the rest of Kiln asks whether a feature is on for an organization. Flags are read from
// PostgreSQL and kept for a few seconds per process, so a hot path costs no query; an administrator's
// change is seen at once by this process (invalidate) and within the cache time by the others.
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { FeatureFlagSchema } from './feature-flag.entity.ts';

/**
 * The flags Kiln's code reads, each with what it does when on for an organization. An administrator
 * creates one (POST /v1/admin/feature-flags) to use it; a flag that does not exist is off.
 */
export const KNOWN_FLAGS = {
  /** New deployments are refused (503 SERVICE_UNAVAILABLE): a lever for maintenance or an incident. */
  pauseNewDeployments: 'deployments.paused',
} as const;

export interface FlagRule {
  readonly enabled: boolean;
  readonly rolloutPercent: number;
  readonly overrides: Readonly<Record<string, boolean>>;
}

/**
 * An organization's place (0-99) in a flag's rollout, from a hash of the flag key and organization id: it
 * never changes, so raising the percentage only adds organizations, and each flag picks its own share.
 */
export function rolloutBucket(key: string, organizationId: string): number {
  return createHash('sha256').update(`${key}\u0000${organizationId}`).digest().readUInt32BE(0) % 100;
}

export function evaluate(key: string, rule: FlagRule, organizationId: string): boolean {
  const override = rule.overrides[organizationId];
  if (override !== undefined) return override;
  return rule.enabled || rolloutBucket(key, organizationId) < rule.rolloutPercent;
}

export function createFeatureFlags(deps: { cacheMs?: number } = {}) {
  const cacheMs = deps.cacheMs ?? 5_000;
  const cache = new Map<string, { rule: FlagRule | null; until: number }>();
  return {
    /** Whether the flag is on for the organization; an unknown flag is off. */
    async isEnabled(em: EntityManager, key: string, organizationId: string): Promise<boolean> {
      let entry = cache.get(key);
      if (!entry || entry.until <= Date.now()) {
        const flag = await em.findOne(FeatureFlagSchema, { key }, { disableIdentityMap: true });
        entry = { rule: flag && { enabled: flag.enabled, rolloutPercent: flag.rolloutPercent, overrides: flag.overrides }, until: Date.now() + cacheMs };
        cache.set(key, entry);
      }
      return entry.rule ? evaluate(key, entry.rule, organizationId) : false;
    },
    /** Forgets a flag after an administrator changed it. */
    invalidate(key: string): void {
      cache.delete(key);
    },
  };
}

export type FeatureFlags = ReturnType<typeof createFeatureFlags>;
