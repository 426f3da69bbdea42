import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

/** Which of Kiln's two Stripe endpoints received the event. */
export const PAYMENT_WEBHOOKS = ['payprovider', 'billing'] as const;
export type PaymentWebhook = (typeof PAYMENT_WEBHOOKS)[number];

/**
 * One Stripe event, recorded in the same transaction as its effect and unique by Stripe's event id and the endpoint: a
 * redelivery (Stripe retries until it gets a 2xx, and may deliver twice) finds it and changes nothing.
 */
export const PaymentEventSchema = defineEntity({
  name: 'PaymentEvent',
  extends: BaseSchema,
  uniques: [{ properties: ['stripeEventId', 'webhook'] }],
  properties: {
    stripeEventId: p.string(),
    webhook: p.string().$type<PaymentWebhook>(),
    type: p.string(),
    /** The organization it acted on, once known from Kiln's own rows; null for events that matched none. */
    organizationId: p.string().nullable(),
    /** What Kiln did with it, in words (credited, plan changed, ignored and why). */
    outcome: p.text(),
  },
});

export type PaymentEvent = InferEntity<typeof PaymentEventSchema>;
