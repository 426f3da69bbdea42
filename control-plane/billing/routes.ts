// GET /v1/credits (the balance and its ledger) and GET /api/billing/usage (this period's usage and its projection).
import { defineRoute, type Route } from '../http/routes.ts';
import { CreditsQuery, CreditsView, UsageQuery, UsageView } from './schemas.ts';
import type { BillingService } from './service.ts';

export function billingRoutes(billing: BillingService): Route[] {
  return [
    defineRoute({
      tag: 'Billing', resourceType: 'credit_entry', permission: 'billing:read', method: 'GET', path: '/v1/credits', operationId: 'getCredits',
      summary: 'The prepaid credit balance, its totals by kind (grants, top-ups, metered debits, adjustments) and the ledger, newest first (cursor pages)',
      query: CreditsQuery, response: CreditsView,
      handle: async ({ query, state }) => ({ data: await billing.credits(state.em, state.principal!, query) }),
    }),
    defineRoute({
      tag: 'Billing', resourceType: 'usage', permission: 'billing:read', method: 'GET', path: '/api/billing/usage', operationId: 'getBillingUsage',
      summary: 'This billing period\'s GPU usage and cost by deployment and GPU type (live, to the millisecond), the tokens served, what was drawn from credits, and the projection to the period\'s end',
      query: UsageQuery, response: UsageView,
      handle: async ({ state }) => ({ data: await billing.usage(state.em, state.principal!) }),
    }),
  ];
}
