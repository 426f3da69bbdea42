import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

/**
 * A platform feature switch. An organization's override wins; otherwise `enabled` turns it on for everyone,
 * and `rolloutPercent` turns it on for that share of organizations (chosen by a stable hash, see flags.ts).
 */
export const FeatureFlagSchema = defineEntity({
  name: 'FeatureFlag',
  extends: BaseSchema,
  properties: {
    key: p.string().unique(),
    description: p.text(),
    enabled: p.boolean(),
    rolloutPercent: p.integer(),
    /** Organization id to on/off. */
    overrides: p.json<Record<string, boolean>>(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type FeatureFlag = InferEntity<typeof FeatureFlagSchema>;
