import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

import type { Plan } from '../../catalog/plans.ts';

// The plans are the catalog's (catalog/plans.ts); the API finds them beside the organization that has one.

/** Regions an organization may choose as the default for its GPU clusters (AWS regions with GPU capacity). */
export const REGIONS = [
  'us-east-1', 'us-east-2', 'us-west-2', 'ca-central-1', 'sa-east-1', 'eu-west-1', 'eu-west-2', 'eu-central-1', 'eu-north-1',
  'ap-south-1', 'ap-northeast-1', 'ap-southeast-1', 'ap-southeast-2',
] as const;
export type Region = (typeof REGIONS)[number];

export const OrganizationSchema = defineEntity({
  name: 'Organization',
  extends: BaseSchema,
  properties: {
    name: p.string(),
    /** DNS-label-like, unique: usable in host names and URLs. */
    slug: p.string().unique(),
    contactEmail: p.string().nullable(),
    defaultRegion: p.string().$type<Region>(),
    plan: p.string().$type<Plan>(),
    /** Prepaid balance in US cents; deployments need credits to start. */
    creditsCents: p.integer(),
  },
});

export type Organization = InferEntity<typeof OrganizationSchema>;
