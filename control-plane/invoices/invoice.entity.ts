import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import type { Plan } from '../../catalog/plans.ts';
import { BaseSchema } from '../database/base.entity.ts';
import type { DeploymentUsage } from '../../lib/billing/usage.ts';

/**
 * One line of an invoice: a deployment's GPU time of one type at one rate over the period (the usage shape
 * metering charges, lib/billing/usage.ts), its exact units rounded once to `amountCents`.
 */
export interface InvoiceLine extends DeploymentUsage {
  readonly amountCents: number;
}

/**
 * An organization's invoice for one billing period (a calendar month, UTC), issued once by the monthly close
 * (workflows/invoicing/). Unique per (organization, number) and (organization, periodStart); the database
 * refuses any UPDATE or DELETE of an issued invoice (Migration20261124100000Invoices).
 */
export const InvoiceSchema = defineEntity({
  name: 'Invoice',
  extends: BaseSchema,
  uniques: [{ properties: ['organizationId', 'number'] }, { properties: ['organizationId', 'periodStart'] }],
  properties: {
    organizationId: p.string(),
    /** 1, 2, 3... per organization, in the order issued. */
    number: p.integer(),
    periodStart: p.datetime(3),
    periodEnd: p.datetime(3),
    /** The plan the organization had over the period, whose monthly fee is charged. */
    plan: p.string().$type<Plan>(),
    planFeeCents: p.integer(),
    /** The sum of the lines' amounts. */
    usageCents: p.integer(),
    /** What the period's metering debits drew from a balance that was not negative. */
    creditsAppliedCents: p.integer(),
    /** planFeeCents + usageCents - creditsAppliedCents, never below zero. */
    totalCents: p.integer(),
    currency: p.string().length(3).default('usd'),
    lines: p.json<InvoiceLine[]>(),
    issuedAt: p.datetime(3),
  },
});

export type Invoice = InferEntity<typeof InvoiceSchema>;
