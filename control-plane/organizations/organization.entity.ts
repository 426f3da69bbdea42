import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

export const PLANS = ['free', 'startup', 'growth', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export const OrganizationSchema = defineEntity({
  name: 'Organization',
  extends: BaseSchema,
  properties: {
    name: p.string(),
    plan: p.string().$type<Plan>(),
    /** Prepaid balance in US cents; deployments need credits to start. */
    creditsCents: p.integer(),
  },
});

export type Organization = InferEntity<typeof OrganizationSchema>;
