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

/** What creation does with a model whose check could not run (OrganizationSchema.unverifiedModels). */
export const UNVERIFIED_MODELS_POLICIES = ['allow', 'refuse'] as const;
export type UnverifiedModelsPolicy = (typeof UNVERIFIED_MODELS_POLICIES)[number];

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
    /**
     * A new deployment whose model check cannot run (the Hugging Face Hub unreachable): `allow` creates it with
     * the check reported unverified, `refuse` refuses it (422) until the model can be checked.
     */
    unverifiedModels: p.string().$type<UnverifiedModelsPolicy>().default('allow'),
    /** Prepaid balance in US cents; deployments need credits to start. Only the credit ledger moves it (billing/credit-ledger.ts). */
    creditsCents: p.integer(),
    /** Usage metered so far, in exact units (catalog/billing.ts): the debits are the whole cents it crossed. */
    meteredUnits: p.bigint('number').default(0),
    /** End of the last metering interval closed for the organization; null before its first. */
    meteredUntil: p.datetime(3).nullable(),
    /** The last grant or top-up: low-balance thresholds are percentages of it. */
    lastTopUpCents: p.integer().default(0),
    /** The lowest low-balance threshold its members were told of since that top-up; null above all. */
    lowBalancePercent: p.integer().nullable(),
    /** When metering first drew the balance to zero or below; cleared by a top-up. */
    creditsExhaustedAt: p.datetime(3).nullable(),
    /** When its deployments were stopped for want of credits (the grace period after exhaustion ran out); cleared by a top-up. */
    creditsStoppedAt: p.datetime(3).nullable(),
    /** Its customer at Stripe (payments/), created on first checkout or portal visit. */
    stripeCustomerId: p.string().nullable(),
    /** The Stripe subscription paying for the plan: plan changes update it rather than start another. */
    stripeSubscriptionId: p.string().nullable(),
    /** A plan that replaces `plan` at `pendingPlanAt` (a downgrade or cancellation waits for the period's end); the monthly close applies it. */
    pendingPlan: p.string().$type<Plan>().nullable(),
    pendingPlanAt: p.datetime(3).nullable(),
  },
});

export type Organization = InferEntity<typeof OrganizationSchema>;
