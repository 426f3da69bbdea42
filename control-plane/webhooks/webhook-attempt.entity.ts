import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

/** One try to deliver one event to one subscription, as the delivery workflow's activity made it. */
export const WebhookAttemptSchema = defineEntity({
  name: 'WebhookAttempt',
  extends: BaseSchema,
  indexes: [{ properties: ['subscriptionId', 'createdAt'] }],
  properties: {
    subscriptionId: p.string(),
    deliveryId: p.string(),
    eventId: p.string(),
    attempt: p.integer(),
    statusCode: p.integer().nullable(),
    error: p.text().nullable(),
    durationMs: p.integer(),
  },
});

export type WebhookAttempt = InferEntity<typeof WebhookAttemptSchema>;
