// Payments through Stripe: an organization's Stripe customer, checkout sessions for credits and plans, the
// customer portal, plan changes (an upgrade is paid through checkout now, a downgrade waits for the billing
// period's end), and Stripe's signed webhooks, each event acted on once. Stripe's payloads are never trusted
// for who or how much: an event names a session or a customer, and Kiln's own rows say the rest.
import type { EntityManager } from '@mikro-orm/postgresql';
import type Stripe from 'stripe';
import { PLAN_TERMS, type Plan } from '../../catalog/plans.ts';
import { billingPeriod } from '../../catalog/billing.ts';
import { newId } from '../../lib/ids.ts';
import type { CredentialCache } from '../auth/credential-cache.ts';
import type { Principal } from '../auth/principal.ts';
import { moveCredits } from '../billing/credit-ledger.ts';
import type { StripeSettings } from '../config.ts';
import { BadRequestError, invalidField, PaymentsUnavailableError, UpstreamError } from '../core/errors.ts';
import { loadOnFirstUse } from '../core/load-on-first-use.ts';
import { CheckoutSchema, type Checkout, type CheckoutKind, type CheckoutStatus } from './checkout.entity.ts';
import type { PaymentWebhook } from './payment-event.entity.ts';

/** The events each endpoint acts on; any other is recorded and ignored. */
export const WEBHOOK_EVENTS: Readonly<Record<PaymentWebhook, readonly string[]>> = {
  payprovider: ['checkout.session.completed', 'checkout.session.async_payment_succeeded', 'checkout.session.async_payment_failed', 'checkout.session.expired'],
  billing: ['customer.subscription.updated', 'customer.subscription.deleted', 'invoice.payment_failed'],
};

/** Subscription states after which the plan is no longer paid for. */
const ENDED_SUBSCRIPTION = new Set(['canceled', 'unpaid', 'incomplete_expired']);

export type CheckoutInput = { kind: 'credits'; amountCents: number } | { kind: 'plan'; plan: Exclude<Plan, 'free'> };

export interface CheckoutView {
  id: string;
  kind: CheckoutKind;
  amountCents: number | null;
  plan: Plan | null;
  status: CheckoutStatus;
  url: string;
  createdAt: string;
}

export interface PlanChange {
  change: 'upgrade' | 'downgrade';
  currentPlan: Plan;
  plan: Plan;
  effectiveAt: string | null;
  checkout: CheckoutView | null;
}

export interface WebhookReceipt {
  received: true;
  duplicate: boolean;
  outcome: string;
}

export interface PaymentDeps {
  /** undefined: Stripe is not configured, and every route needing it answers 503. */
  stripe: StripeSettings | undefined;
  /** Forgotten for an organization whose plan changed, so its next request is rate-limited by the new plan. */
  credentials: Pick<CredentialCache, 'forget'>;
  now?: () => Date;
}

interface OrganizationRow { id: string; name: string; contact_email: string | null; plan: Plan; stripe_customer_id: string | null; stripe_subscription_id: string | null }
interface CheckoutRow { id: string; organization_id: string; kind: CheckoutKind; amount_cents: number | null; plan: Plan | null; status: CheckoutStatus }

/** What an event did: the organization it acted on (from Kiln's rows), in words, and whether that organization's plan changed. */
interface Effect { organizationId: string | null; outcome: string; planChanged?: boolean }

const view = (row: Checkout): CheckoutView => ({
  id: row.id, kind: row.kind, amountCents: row.amountCents ?? null, plan: row.plan ?? null, status: row.status, url: row.url, createdAt: row.createdAt.toISOString(),
});

/** Stripe's SDK, loaded by the first payment call (control-plane/core/load-on-first-use.ts says why). */
const loadStripe = loadOnFirstUse(async () => (await import('stripe')).default);

/** The SDK reaches the API at STRIPE_API_BASE: Stripe itself, or the local stand-in over plain HTTP. */
async function stripeClient(settings: StripeSettings): Promise<Stripe> {
  const base = new URL(settings.apiBase);
  const protocol = base.protocol === 'http:' ? 'http' : 'https';
  const Stripe = await loadStripe();
  return new Stripe(settings.secretKey, {
    host: base.hostname, port: Number(base.port || (protocol === 'http' ? 80 : 443)), protocol,
    // A request that hangs holds its caller's answer (and, for a new customer, the organization's row lock).
    timeout: 10_000, maxNetworkRetries: 2,
    appInfo: { name: 'Kiln' },
  });
}

/** Stripe refused or could not be reached: the caller sees 502 with Stripe's reason, never a 500. */
async function atStripe<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    // The SDK is loaded: `call` used it.
    if (error instanceof (await loadStripe()).errors.StripeError) throw new UpstreamError(`Stripe could not ${what}: ${error.message}`);
    throw error;
  }
}

export function createPaymentService(deps: PaymentDeps) {
  const now = deps.now ?? (() => new Date());
  const client = deps.stripe ? loadOnFirstUse(() => stripeClient(deps.stripe!)) : undefined;

  async function configured(): Promise<{ stripe: Stripe; settings: StripeSettings }> {
    if (!client || !deps.stripe) throw new PaymentsUnavailableError('Payments are not available: Stripe is not configured on this server (STRIPE_SECRET_KEY)');
    return { stripe: await client(), settings: deps.stripe };
  }

  async function organization(em: EntityManager, organizationId: string, lock = false): Promise<OrganizationRow> {
    const [row] = await em.execute<OrganizationRow[]>(
      `SELECT id, name, contact_email, plan, stripe_customer_id, stripe_subscription_id FROM organization WHERE id = ?${lock ? ' FOR UPDATE' : ''}`, [organizationId]);
    if (!row) throw new Error(`organization ${organizationId} not found`);
    return row;
  }

  /**
   * The organization's Stripe customer, created on first use. Its row stays locked while Stripe creates it, so
   * concurrent first uses make one; the idempotency key makes a retry after a lost answer find the same one.
   */
  async function customerOf(em: EntityManager, organizationId: string): Promise<string> {
    const known = (await organization(em, organizationId)).stripe_customer_id;
    if (known) return known;
    const { stripe } = await configured();
    return em.transactional(async (tx) => {
      const row = await organization(tx, organizationId, true);
      if (row.stripe_customer_id) return row.stripe_customer_id;
      const customer = await atStripe('create the customer', () => stripe.customers.create(
        { name: row.name, ...(row.contact_email ? { email: row.contact_email } : {}), metadata: { organizationId } },
        { idempotencyKey: `kiln-customer-${organizationId}` }));
      await tx.execute('UPDATE organization SET stripe_customer_id = ? WHERE id = ?', [customer.id, organizationId]);
      return customer.id;
    });
  }

  /** The subscription's plan item moved to `plan`'s monthly price; `proration` says whether Stripe bills the difference now. */
  async function moveSubscription(organizationId: string, subscriptionId: string, plan: Plan, proration: 'always_invoice' | 'none'): Promise<void> {
    const { stripe } = await configured();
    const current = await atStripe('read the subscription', () => stripe.subscriptions.retrieve(subscriptionId));
    const item = current.items.data[0];
    if (!item) throw new UpstreamError(`Stripe's subscription ${subscriptionId} has no item to change`);
    const price = await atStripe('create the plan\'s price', () => stripe.prices.create({
      currency: 'usd', unit_amount: PLAN_TERMS[plan].monthlyPriceCents, recurring: { interval: 'month' }, product_data: { name: `Kiln ${plan} plan` },
    }));
    await atStripe('change the subscription', () => stripe.subscriptions.update(subscriptionId, {
      items: [{ id: item.id, price: price.id }], proration_behavior: proration, cancel_at_period_end: false, metadata: { organizationId, plan },
    }));
  }

  /** Appends query parameters to the return page, which may carry some already. */
  const returnTo = (base: string, query: string) => `${base}${base.includes('?') ? '&' : '?'}${query}`;

  async function checkout(em: EntityManager, principal: Principal, input: CheckoutInput): Promise<CheckoutView> {
    const { stripe, settings } = await configured();
    const organizationId = principal.organizationId;
    const customer = await customerOf(em, organizationId);
    const id = newId('chk');
    // Both name Kiln's checkout; the webhook compares them with the row stored below.
    const metadata = { organizationId, checkoutId: id };
    const purchase: Stripe.Checkout.SessionCreateParams = input.kind === 'credits'
      ? {
        mode: 'payment',
        line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: input.amountCents, product_data: { name: 'Kiln credits' } } }],
        payment_intent_data: { metadata },
      }
      : {
        mode: 'subscription',
        line_items: [{
          quantity: 1,
          price_data: { currency: 'usd', unit_amount: PLAN_TERMS[input.plan].monthlyPriceCents, recurring: { interval: 'month' }, product_data: { name: `Kiln ${input.plan} plan` } },
        }],
        subscription_data: { metadata },
      };
    const session = await atStripe('create the checkout session', () => stripe.checkout.sessions.create({
      ...purchase,
      customer,
      client_reference_id: organizationId,
      metadata,
      success_url: returnTo(settings.returnUrl, 'checkout=success&session_id={CHECKOUT_SESSION_ID}'),
      cancel_url: returnTo(settings.returnUrl, 'checkout=cancelled'),
    }, { idempotencyKey: `kiln-checkout-${id}` }));
    if (!session.url) throw new UpstreamError('Stripe created a checkout session without a payment page');
    const row: Checkout = {
      id, createdAt: now(), organizationId, stripeSessionId: session.id, kind: input.kind,
      amountCents: input.kind === 'credits' ? input.amountCents : null, plan: input.kind === 'plan' ? input.plan : null,
      status: 'open', url: session.url, completedAt: null,
    };
    await em.insert(CheckoutSchema, row);
    return view(row);
  }

  return {
    /** Whether Stripe is configured (GET /v1/billing/webhook). */
    get configured(): boolean {
      return client !== undefined;
    },

    checkout,

    /**
     * A dearer plan: checkout for it now, or, when a subscription already pays for a plan, that subscription
     * moved to the new price (Stripe bills the difference at once) and the plan changed now. A cheaper one:
     * recorded to replace the plan when the billing period ends, the subscription renewing at the cheaper price
     * (or cancelled at its period's end, for free).
     */
    async changePlan(em: EntityManager, principal: Principal, plan: Plan): Promise<PlanChange> {
      const organizationId = principal.organizationId;
      const { plan: current, stripe_subscription_id: subscription } = await organization(em, organizationId);
      if (plan === current) throw invalidField('plan', `the organization is on the ${plan} plan already`);
      const paidBySubscription = subscription !== null && current !== 'free';
      if (PLAN_TERMS[plan].monthlyPriceCents > PLAN_TERMS[current].monthlyPriceCents) {
        if (!paidBySubscription) {
          const paid = await checkout(em, principal, { kind: 'plan', plan: plan as Exclude<Plan, 'free'> });
          return { change: 'upgrade', currentPlan: current, plan, effectiveAt: null, checkout: paid };
        }
        await moveSubscription(organizationId, subscription, plan, 'always_invoice');
        await em.execute('UPDATE organization SET plan = ?, pending_plan = NULL, pending_plan_at = NULL WHERE id = ?', [plan, organizationId]);
        deps.credentials.forget({ organizationId });
        return { change: 'upgrade', currentPlan: current, plan, effectiveAt: now().toISOString(), checkout: null };
      }
      if (paidBySubscription) {
        if (plan === 'free') {
          const { stripe } = await configured();
          await atStripe('cancel the subscription at its period\'s end', () => stripe.subscriptions.update(subscription, { cancel_at_period_end: true }));
        } else {
          await moveSubscription(organizationId, subscription, plan, 'none');
        }
      }
      // The month is paid for: the cheaper plan starts with the next one (the monthly close applies it).
      const effectiveAt = billingPeriod(now()).end;
      await em.execute('UPDATE organization SET pending_plan = ?, pending_plan_at = ? WHERE id = ?', [plan, effectiveAt, organizationId]);
      return { change: 'downgrade', currentPlan: current, plan, effectiveAt: effectiveAt.toISOString(), checkout: null };
    },

    async portal(em: EntityManager, principal: Principal, returnUrl: string | undefined): Promise<{ url: string }> {
      const { stripe, settings } = await configured();
      const customer = await customerOf(em, principal.organizationId);
      const session = await atStripe('open the customer portal', () => stripe.billingPortal.sessions.create({ customer, return_url: returnUrl ?? settings.returnUrl }));
      return { url: session.url };
    },

    /**
     * One delivery of a Stripe event to one of the two endpoints: the signature over the raw body is checked
     * (400, nothing changes, when it fails), then the event is recorded and acted on in one transaction, once
     * per endpoint and event id: a redelivery answers 200 and changes nothing.
     */
    async receive(em: EntityManager, webhook: PaymentWebhook, rawBody: string | undefined, signature: string): Promise<WebhookReceipt> {
      const { settings } = await configured();
      const event = await verify(rawBody, signature, webhook === 'billing' ? settings.billingWebhookSecret : settings.webhookSecret);
      const result = await em.transactional(async (tx): Promise<WebhookReceipt & { planChangedFor?: string }> => {
        const recorded = await tx.execute<{ id: string }[]>(
          `INSERT INTO payment_event (id, created_at, stripe_event_id, webhook, type, organization_id, outcome) VALUES (?, now(), ?, ?, ?, NULL, '')
           ON CONFLICT (stripe_event_id, webhook) DO NOTHING RETURNING id`,
          [newId('pev'), event.id, webhook, event.type]);
        if (recorded.length === 0) {
          const [earlier] = await tx.execute<{ outcome: string }[]>('SELECT outcome FROM payment_event WHERE stripe_event_id = ? AND webhook = ?', [event.id, webhook]);
          return { received: true, duplicate: true, outcome: earlier?.outcome ?? '' };
        }
        const effect = WEBHOOK_EVENTS[webhook].includes(event.type)
          ? await (webhook === 'payprovider' ? onCheckoutEvent(tx, event) : onBillingEvent(tx, event))
          : { organizationId: null, outcome: `ignored: ${event.type} is not an event ${webhook === 'payprovider' ? '/v1/payprovider/webhook' : '/v1/billing/webhook'} acts on` };
        await tx.execute('UPDATE payment_event SET organization_id = ?, outcome = ? WHERE id = ?', [effect.organizationId, effect.outcome, recorded[0]!.id]);
        return { received: true, duplicate: false, outcome: effect.outcome, ...(effect.planChanged && effect.organizationId ? { planChangedFor: effect.organizationId } : {}) };
      });
      // After the commit: a credential looked up meanwhile would otherwise be cached with the old plan.
      if (result.planChangedFor) deps.credentials.forget({ organizationId: result.planChangedFor });
      return { received: result.received, duplicate: result.duplicate, outcome: result.outcome };
    },
  };

  /** Checkout sessions: paid (credits or a plan), failed, expired; only for a session Kiln stored, of the organization it names. */
  async function onCheckoutEvent(tx: EntityManager, event: Stripe.Event): Promise<Effect> {
    const session = event.data.object as Stripe.Checkout.Session;
    const [row] = await tx.execute<CheckoutRow[]>(
      'SELECT id, organization_id, kind, amount_cents, plan, status FROM checkout WHERE stripe_session_id = ? FOR UPDATE', [String(session.id ?? '')]);
    if (!row) return { organizationId: null, outcome: 'ignored: no checkout of Kiln has this session' };
    const named = session.metadata?.organizationId;
    if (session.client_reference_id !== row.organization_id || (named !== undefined && named !== row.organization_id)
      || (session.metadata?.checkoutId !== undefined && session.metadata.checkoutId !== row.id)) {
      return { organizationId: null, outcome: `ignored: the event names another organization than checkout ${row.id}'s` };
    }
    const organizationId = row.organization_id;
    switch (event.type) {
      case 'checkout.session.expired':
        if (row.status !== 'open') return { organizationId, outcome: `ignored: checkout ${row.id} is ${row.status} already` };
        await tx.execute(`UPDATE checkout SET status = 'expired' WHERE id = ?`, [row.id]);
        return { organizationId, outcome: `checkout ${row.id} expired` };
      case 'checkout.session.async_payment_failed':
        return { organizationId, outcome: `checkout ${row.id}: the payment failed` };
      case 'checkout.session.completed':
        // Paid later (bank debits...): async_payment_succeeded follows. A plan's subscription may start unpaid (a trial).
        if (session.payment_status !== 'paid' && !(row.kind === 'plan' && session.payment_status === 'no_payment_required')) {
          return { organizationId, outcome: `checkout ${row.id} completed, awaiting payment (${String(session.payment_status)})` };
        }
        return fulfil(tx, row, session);
      default:
        return fulfil(tx, row, session);
    }
  }

  /** A paid checkout: credits into the ledger (once per session), or the organization's plan. An expired checkout paid after all still counts. */
  async function fulfil(tx: EntityManager, row: CheckoutRow, session: Stripe.Checkout.Session): Promise<Effect> {
    const organizationId = row.organization_id;
    const sessionId = session.id;
    if (row.status === 'completed') return { organizationId, outcome: `ignored: checkout ${row.id} was fulfilled already` };
    await tx.execute(`UPDATE checkout SET status = 'completed', completed_at = ? WHERE id = ?`, [now(), row.id]);
    if (row.kind === 'credits') {
      const moved = await moveCredits(tx, {
        organizationId, kind: 'top_up', amountCents: row.amount_cents!, description: `Credits bought through checkout ${row.id}`, reference: `checkout:${sessionId}`,
      });
      return { organizationId, outcome: moved.applied ? `credited ${row.amount_cents} cents (checkout ${row.id})` : `checkout ${row.id} had been credited already` };
    }
    // A plan bought replaces any change that was waiting for the period's end; its subscription pays for later changes.
    const subscription = typeof session.subscription === 'string' ? session.subscription : session.subscription?.id ?? null;
    await tx.execute('UPDATE organization SET plan = ?, pending_plan = NULL, pending_plan_at = NULL, stripe_subscription_id = coalesce(?, stripe_subscription_id) WHERE id = ?',
      [row.plan, subscription, organizationId]);
    return { organizationId, outcome: `plan changed to ${row.plan} (checkout ${row.id})`, planChanged: true };
  }

  /** Subscriptions and invoices, found by the Stripe customer Kiln created for the organization. */
  async function onBillingEvent(tx: EntityManager, event: Stripe.Event): Promise<Effect> {
    const object = event.data.object as Stripe.Subscription | Stripe.Invoice;
    const customer = typeof object.customer === 'string' ? object.customer : object.customer?.id;
    const [org] = customer
      ? await tx.execute<OrganizationRow[]>('SELECT id, plan FROM organization WHERE stripe_customer_id = ? FOR UPDATE', [customer])
      : [];
    if (!org) return { organizationId: null, outcome: 'ignored: no organization has this Stripe customer' };
    const named = object.metadata?.organizationId;
    if (named !== undefined && named !== org.id) return { organizationId: null, outcome: 'ignored: the event names another organization than its customer\'s' };
    if (event.type === 'invoice.payment_failed') return { organizationId: org.id, outcome: `payment failed for Stripe invoice ${String(object.id)}` };
    const subscription = object as Stripe.Subscription;
    const ending = event.type === 'customer.subscription.deleted' || subscription.cancel_at_period_end === true || ENDED_SUBSCRIPTION.has(subscription.status);
    if (!ending) return { organizationId: org.id, outcome: `subscription ${String(subscription.id)} is ${String(subscription.status)}: no change` };
    if (org.plan === 'free') return { organizationId: org.id, outcome: 'subscription ended; the organization is on the free plan already' };
    // The month is paid for: free from the next one, when the monthly close applies it. A subscription gone for
    // good pays for nothing more: the next upgrade goes through checkout.
    const at = billingPeriod(now()).end;
    await tx.execute(`UPDATE organization SET pending_plan = 'free', pending_plan_at = ?${event.type === 'customer.subscription.deleted' ? ', stripe_subscription_id = NULL' : ''} WHERE id = ?`, [at, org.id]);
    return { organizationId: org.id, outcome: `subscription ${String(subscription.id)} ended: the free plan from ${at.toISOString()}` };
  }
}

/** The one check both webhooks make: Stripe's signature (with its timestamp tolerance) over the exact body received. */
async function verify(rawBody: string | undefined, signature: string, secret: string): Promise<Stripe.Event> {
  if (!signature) throw new BadRequestError('Missing header Stripe-Signature', { header: 'Stripe-Signature' });
  const Stripe = await loadStripe();
  try {
    return Stripe.webhooks.constructEvent(rawBody ?? '', signature, secret);
  } catch (error) {
    if (error instanceof Stripe.errors.StripeError) throw new BadRequestError('Invalid header Stripe-Signature: it does not sign this body with the webhook secret', { header: 'Stripe-Signature' });
    throw error;
  }
}

export type PaymentService = ReturnType<typeof createPaymentService>;
