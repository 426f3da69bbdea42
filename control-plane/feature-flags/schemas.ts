import { z } from 'zod';
import { ORGANIZATION_ID_PATTERN } from '../../lib/ids.ts';

const key = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,99}$/, 'must be 1 to 100 lower-case letters, digits, dots, hyphens or underscores')
  .meta({ example: 'new-scheduler' });
const description = z.string().trim().max(1000);
const rolloutPercent = z.number().int().min(0).max(100).meta({ description: 'Share of organizations (0-100) the flag is on for, chosen by a stable hash of the organization id.' });
const organizationId = z.string().regex(ORGANIZATION_ID_PATTERN);

export const CreateFeatureFlagRequest = z.strictObject({
  key,
  description: description.default(''),
  enabled: z.boolean().default(false).meta({ description: 'On for every organization (overrides still win).' }),
  rolloutPercent: rolloutPercent.default(0),
  overrides: z.record(organizationId, z.boolean()).default({}).meta({ description: 'Organization id to on/off; wins over enabled and rollout.' }),
}).meta({ id: 'CreateFeatureFlagRequest' });

export const UpdateFeatureFlagRequest = z.strictObject({
  description: description.optional(),
  enabled: z.boolean().optional(),
  rolloutPercent: rolloutPercent.optional(),
  overrides: z.record(organizationId, z.boolean().nullable()).optional()
    .meta({ description: 'Merged into the existing overrides; null removes an organization\'s override.' }),
}).meta({ id: 'UpdateFeatureFlagRequest' });

export const FeatureFlagIdParams = z.object({ id: z.string().max(64) });

export const FeatureFlagView = z.object({
  id: z.string().meta({ example: 'ffl_0123456789abcdefghij' }),
  key: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  rolloutPercent: z.number().int(),
  overrides: z.record(z.string(), z.boolean()),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
}).meta({ id: 'FeatureFlag' });

export const DeletedFeatureFlag = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'DeletedFeatureFlag' });

export type CreateFeatureFlagInput = z.output<typeof CreateFeatureFlagRequest>;
export type UpdateFeatureFlagInput = z.output<typeof UpdateFeatureFlagRequest>;
export type FeatureFlagViewBody = z.infer<typeof FeatureFlagView>;
