// Payloads of checkout (/v1/payprovider/checkout), plan changes (/v1/billing/upgrade), the customer portal
// (/v1/billing/portal) and Stripe's webhooks (/v1/payprovider/webhook, /v1/billing/webhook).
import { z } from 'zod';
import { PAID_PLANS, PLANS } from '../../catalog/plans.ts';
import { CHECKOUT_KINDS, CHECKOUT_STATUSES } from './checkout.entity.ts';

export const MIN_TOP_UP_CENTS = 500;
export const MAX_TOP_UP_CENTS = 1_000_000;

const amountCents = z.number().int().min(MIN_TOP_UP_CENTS).max(MAX_TOP_UP_CENTS)
  .meta({ description: `Credits to buy, in US cents: ${MIN_TOP_UP_CENTS} to ${MAX_TOP_UP_CENTS}.`, example: 2_000 });

export const CheckoutRequest = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('credits'), amountCents }),
  z.strictObject({ kind: z.literal('plan'), plan: z.enum(PAID_PLANS).meta({ description: 'The plan to subscribe to, billed monthly.' }) }),
]).meta({ id: 'CheckoutRequest', description: 'Prepaid credits (a one-off payment) or a plan (a monthly subscription).' });

export const CheckoutView = z.object({
  id: z.string().meta({ example: 'chk_0123456789abcdefghij' }),
  kind: z.enum(CHECKOUT_KINDS),
  amountCents: z.number().int().nullable().meta({ description: 'Credits: what the payment adds to the balance.' }),
  plan: z.enum(PLANS).nullable().meta({ description: 'Plan: what the organization moves to once paid.' }),
  status: z.enum(CHECKOUT_STATUSES),
  url: z.string().meta({ description: 'Stripe\'s checkout page: send the user there to pay.' }),
  createdAt: z.iso.datetime(),
}).meta({ id: 'Checkout' });

export const UpgradeRequest = z.strictObject({
  plan: z.enum(PLANS).meta({ description: 'The plan wanted: a dearer one is paid through checkout now, a cheaper one (free included) takes effect when the billing period ends.' }),
}).meta({ id: 'UpgradeRequest' });

export const PlanChangeView = z.object({
  change: z.enum(['upgrade', 'downgrade']),
  currentPlan: z.enum(PLANS),
  plan: z.enum(PLANS),
  effectiveAt: z.iso.datetime().nullable().meta({ description: 'Downgrade: when the plan changes (the start of the next billing month, UTC). Upgrade through checkout: null, it changes once checkout is paid; upgrade of a plan a subscription already pays for: now (the subscription moves to the new price and Stripe bills the difference).' }),
  checkout: CheckoutView.nullable().meta({ description: 'Upgrade from the free plan: the checkout to pay; otherwise null.' }),
}).meta({ id: 'PlanChange' });

export const PortalRequest = z.strictObject({
  returnUrl: z.url({ protocol: /^https?$/ }).max(2048).optional().meta({ description: 'Where the portal sends the user back; Kiln\'s billing page when absent.' }),
}).meta({ id: 'PortalRequest' });

export const PortalView = z.object({
  url: z.string().meta({ description: 'Stripe\'s customer portal: payment methods, invoices, the subscription.' }),
}).meta({ id: 'PortalSession' });

/** What the signature covers is the raw body; this shape only documents it (a Stripe event object). */
export const StripeEventRequest = z.looseObject({
  id: z.string().max(255).meta({ example: 'evt_1PQ...' }),
  type: z.string().max(255).meta({ example: 'checkout.session.completed' }),
  data: z.looseObject({ object: z.looseObject({}) }),
}).meta({ id: 'StripeEvent', description: 'A Stripe event, sent by Stripe and signed in the Stripe-Signature header.' });

export const WebhookReceipt = z.object({
  received: z.literal(true),
  duplicate: z.boolean().meta({ description: 'The event had been processed before: nothing changed this time.' }),
  outcome: z.string().meta({ description: 'What Kiln did with it.' }),
}).meta({ id: 'WebhookReceipt' });

export const WebhookInfo = z.object({
  configured: z.boolean().meta({ description: 'Whether Stripe is set up (STRIPE_SECRET_KEY and the webhook secrets); false: the payment routes answer 503.' }),
  events: z.array(z.string()).meta({ description: 'The Stripe event types POST /v1/billing/webhook acts on.' }),
  endpoints: z.array(z.object({
    path: z.string(),
    events: z.array(z.string()).meta({ description: 'The Stripe event types it acts on; others are recorded and ignored.' }),
  })),
}).meta({ id: 'WebhookInfo' });
