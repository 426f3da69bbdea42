// Checkout, plan changes and the customer portal (billing:write, full-access credentials of owners and
// admins), and Stripe's two webhooks (public: Stripe signs them, and the signature is their credential).
import { defineRoute, type Route } from '../http/routes.ts';
import {
  CheckoutRequest, CheckoutView, PlanChangeView, PortalRequest, PortalView, StripeEventRequest, UpgradeRequest, WebhookInfo, WebhookReceipt,
} from './schemas.ts';
import { WEBHOOK_EVENTS, type PaymentService } from './service.ts';

export function paymentRoutes(payments: PaymentService): Route[] {
  return [
    defineRoute({
      tag: 'Billing', resourceType: 'checkout', permission: 'billing:write', method: 'POST', path: '/v1/payprovider/checkout', operationId: 'createCheckoutV1',
      summary: 'A Stripe checkout for prepaid credits (a one-off payment) or a plan (a monthly subscription): send the user to its url; the credits or the plan arrive when Stripe reports the payment',
      body: CheckoutRequest, response: CheckoutView, successStatus: 201, idempotent: true, errors: [502, 503],
      handle: async ({ body, state }) => ({ data: await payments.checkout(state.em, state.principal!, body) }),
    }),
    defineRoute({
      tag: 'Billing', resourceType: 'organization', permission: 'billing:write', method: 'POST', path: '/v1/billing/upgrade', operationId: 'changePlanV1',
      summary: 'Changes the plan: a dearer plan through a Stripe checkout (or at once, when a subscription already pays for a plan: it moves to the new price and Stripe bills the difference), a cheaper one (free included) from the start of the next billing month (UTC); the same plan is 422',
      body: UpgradeRequest, response: PlanChangeView, idempotent: true, errors: [502, 503],
      handle: async ({ body, state }) => {
        state.resourceId = state.principal!.organizationId;
        return { data: await payments.changePlan(state.em, state.principal!, body.plan) };
      },
    }),
    defineRoute({
      tag: 'Billing', resourceType: 'organization', permission: 'billing:write', method: 'POST', path: '/v1/billing/portal', operationId: 'openBillingPortalV1',
      summary: 'A Stripe customer portal session for the organization (payment methods, invoices, the subscription); its Stripe customer is created on first use',
      body: PortalRequest, optionalBody: true, response: PortalView, errors: [502, 503],
      handle: async ({ body, state }) => {
        state.resourceId = state.principal!.organizationId;
        return { data: await payments.portal(state.em, state.principal!, body.returnUrl) };
      },
    }),
    defineRoute({
      tag: 'Billing', resourceType: 'payment_event', permission: 'public', method: 'POST', path: '/v1/payprovider/webhook', operationId: 'receivePaymentWebhookV1',
      summary: `Stripe's checkout events, signed in Stripe-Signature with STRIPE_WEBHOOK_SECRET (400 when the signature fails, nothing changes): ${WEBHOOK_EVENTS.payprovider.join(', ')}. Each event acts once; others are recorded and ignored`,
      body: StripeEventRequest, rawBody: true, response: WebhookReceipt, errors: [503],
      handle: async ({ rawBody, header, state }) => ({ data: await payments.receive(state.em, 'payprovider', rawBody, header('Stripe-Signature')) }),
    }),
    defineRoute({
      tag: 'Billing', resourceType: 'payment_event', permission: 'public', method: 'POST', path: '/v1/billing/webhook', operationId: 'receiveBillingWebhookV1',
      summary: `Stripe's subscription lifecycle events, signed in Stripe-Signature with STRIPE_BILLING_WEBHOOK_SECRET: ${WEBHOOK_EVENTS.billing.join(', ')} (a cancelled subscription returns the organization to the free plan when the billing month ends; a failed invoice payment is recorded). Each event acts once; others are recorded and ignored`,
      body: StripeEventRequest, rawBody: true, response: WebhookReceipt, errors: [503],
      handle: async ({ rawBody, header, state }) => ({ data: await payments.receive(state.em, 'billing', rawBody, header('Stripe-Signature')) }),
    }),
    defineRoute({
      tag: 'Billing', resourceType: 'payment_event', permission: 'public', method: 'GET', path: '/v1/billing/webhook', operationId: 'describeBillingWebhookV1',
      summary: 'Whether Stripe is configured on this server, and the event types /v1/billing/webhook (subscription lifecycle) and /v1/payprovider/webhook (checkout) act on: what to subscribe each Stripe endpoint to',
      response: WebhookInfo,
      handle: async () => ({
        data: {
          configured: payments.configured,
          events: [...WEBHOOK_EVENTS.billing],
          endpoints: [
            { path: '/v1/billing/webhook', events: [...WEBHOOK_EVENTS.billing] },
            { path: '/v1/payprovider/webhook', events: [...WEBHOOK_EVENTS.payprovider] },
          ],
        },
      }),
    }),
  ];
}

