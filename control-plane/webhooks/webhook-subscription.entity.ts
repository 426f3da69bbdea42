import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

/** Where an organization wants deployment events delivered. The signing secret is stored sealed. */
export const WebhookSubscriptionSchema = defineEntity({
  name: 'WebhookSubscription',
  extends: BaseSchema,
  indexes: [{ properties: ['organization', 'createdAt'] }],
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    url: p.text(),
    events: p.json<string[]>(),
    sealedSecret: p.text(),
    deletedAt: p.datetime().nullable(),
  },
});

export type WebhookSubscription = InferEntity<typeof WebhookSubscriptionSchema>;
