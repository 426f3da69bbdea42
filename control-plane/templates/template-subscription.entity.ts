import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { TemplateSchema } from './template.entity.ts';

export const SUBSCRIPTION_REASONS = ['starred', 'deployed', 'subscribed'] as const;
export type SubscriptionReason = (typeof SUBSCRIPTION_REASONS)[number];

/** A user, acting in an organization, hears of a template's new versions (a `template.updated` notification). */
export const TemplateSubscriptionSchema = defineEntity({
  name: 'TemplateSubscription',
  extends: BaseSchema,
  // The unique (user, organization, template) is written in the migration.
  properties: {
    user: () => p.manyToOne(UserSchema).ref(),
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    template: () => p.manyToOne(TemplateSchema).ref(),
    /** How the subscription came about: starring, deploying, or asking (PATCH /v1/notifications/template-updates). */
    reason: p.string().$type<SubscriptionReason>(),
  },
});

export type TemplateSubscription = InferEntity<typeof TemplateSubscriptionSchema>;
