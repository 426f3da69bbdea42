import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import type { Plan } from '../../catalog/plans.ts';
import { BaseSchema } from '../database/base.entity.ts';

/** What a checkout buys: prepaid credits (a one-off payment) or a plan (a monthly subscription). */
export const CHECKOUT_KINDS = ['credits', 'plan'] as const;
export type CheckoutKind = (typeof CHECKOUT_KINDS)[number];

/** open until Stripe says it was paid (completed) or abandoned (expired); a payment after expiry still completes it. */
export const CHECKOUT_STATUSES = ['open', 'completed', 'expired'] as const;
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number];

/**
 * One Stripe Checkout Session Kiln created for an organization. The webhook trusts this row, not the event:
 * an event names its session, and only the organization, amount and plan stored here are acted on.
 */
export const CheckoutSchema = defineEntity({
  name: 'Checkout',
  extends: BaseSchema,
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    organizationId: p.string(),
    stripeSessionId: p.string().unique(),
    kind: p.string().$type<CheckoutKind>(),
    /** Credits: what the payment adds to the balance. */
    amountCents: p.integer().nullable(),
    /** Plan: what the organization moves to once paid. */
    plan: p.string().$type<Plan>().nullable(),
    status: p.string().$type<CheckoutStatus>(),
    /** Stripe's hosted page the user pays on. */
    url: p.text(),
    completedAt: p.datetime(3).nullable(),
  },
});

export type Checkout = InferEntity<typeof CheckoutSchema>;
