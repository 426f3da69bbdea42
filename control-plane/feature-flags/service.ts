// Feature flags as platform administrators manage them (/v1/admin/feature-flags). Reading a flag for an
// organization is flags.ts's isEnabled, which this service keeps fresh.
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../lib/ids.ts';
import { ConflictError, NotFoundError, ValidationError } from '../core/errors.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { FeatureFlagSchema, type FeatureFlag } from './feature-flag.entity.ts';
import type { FeatureFlags } from './flags.ts';
import type { CreateFeatureFlagInput, FeatureFlagViewBody, UpdateFeatureFlagInput } from './schemas.ts';

export function createFeatureFlagService(deps: { flags: Pick<FeatureFlags, 'invalidate'> }) {
  async function find(em: EntityManager, id: string): Promise<FeatureFlag> {
    const flag = await em.findOne(FeatureFlagSchema, { id });
    if (!flag) throw new NotFoundError(`Feature flag ${id} not found`);
    return flag;
  }

  /** Overrides must name organizations that exist. */
  async function assertOrganizations(em: EntityManager, ids: string[]): Promise<void> {
    if (!ids.length) return;
    const known = new Set((await em.find(OrganizationSchema, { id: { $in: ids } }, { fields: ['id'] })).map((o) => o.id));
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length) {
      const fields = unknown.map((id) => ({ field: `overrides.${id}`, message: 'no such organization' }));
      throw new ValidationError(`Invalid field overrides.${unknown[0]}: no such organization`, { fields });
    }
  }

  return {
    async list(em: EntityManager): Promise<FeatureFlagViewBody[]> {
      return (await em.find(FeatureFlagSchema, {}, { orderBy: { key: 'asc' } })).map(view);
    },

    async create(em: EntityManager, input: CreateFeatureFlagInput): Promise<FeatureFlagViewBody> {
      await assertOrganizations(em, Object.keys(input.overrides));
      if (await em.count(FeatureFlagSchema, { key: input.key })) throw keyTaken(input.key);
      const flag = em.create(FeatureFlagSchema, { id: newId('ffl'), ...input });
      await em.flush().catch((error: unknown) => {
        if (error instanceof Error && error.name === 'UniqueConstraintViolationException') throw keyTaken(input.key);
        throw error;
      });
      deps.flags.invalidate(flag.key);
      return view(flag);
    },

    async update(em: EntityManager, id: string, input: UpdateFeatureFlagInput): Promise<FeatureFlagViewBody> {
      const flag = await find(em, id);
      const { overrides, ...rest } = input;
      if (overrides) {
        await assertOrganizations(em, Object.entries(overrides).filter(([, on]) => on !== null).map(([org]) => org));
        const merged = { ...flag.overrides };
        for (const [org, on] of Object.entries(overrides)) {
          if (on === null) delete merged[org];
          else merged[org] = on;
        }
        flag.overrides = merged;
      }
      for (const [field, value] of Object.entries(rest)) if (value !== undefined) Object.assign(flag, { [field]: value });
      await em.flush();
      deps.flags.invalidate(flag.key);
      return view(flag);
    },

    async remove(em: EntityManager, id: string): Promise<{ id: string; deleted: true }> {
      const flag = await find(em, id);
      em.remove(flag);
      await em.flush();
      deps.flags.invalidate(flag.key);
      return { id, deleted: true };
    },
  };
}

function keyTaken(key: string): ConflictError {
  return new ConflictError(`A feature flag with key ${key} already exists`, { field: 'key' });
}

function view(f: FeatureFlag): FeatureFlagViewBody {
  return {
    id: f.id, key: f.key, description: f.description, enabled: f.enabled, rolloutPercent: f.rolloutPercent, overrides: f.overrides,
    createdAt: f.createdAt.toISOString(), updatedAt: f.updatedAt.toISOString(),
  };
}

export type FeatureFlagService = ReturnType<typeof createFeatureFlagService>;
