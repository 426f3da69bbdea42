import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

/** What moves a balance: a grant (sign-up, opening balance), a paid top-up, a metering debit, a correction. */
export const CREDIT_ENTRY_KINDS = ['grant', 'top_up', 'debit', 'adjustment'] as const;
export type CreditEntryKind = (typeof CREDIT_ENTRY_KINDS)[number];

/**
 * One line of an organization's credit ledger; the organization's `creditsCents` is the sum of its lines,
 * kept beside them in the same transaction (credit-ledger.ts). `reference` names what caused it (a usage
 * interval, a checkout session) and is unique per organization, so a cause moves the balance once.
 */
export const CreditEntrySchema = defineEntity({
  name: 'CreditEntry',
  extends: BaseSchema,
  uniques: [{ properties: ['organization', 'reference'] }],
  indexes: [{ properties: ['organization', 'createdAt', 'id'] }],
  properties: {
    // A relation, not a plain id: the sign-up grant is flushed with its new organization, after it.
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    kind: p.string().$type<CreditEntryKind>(),
    /** Positive adds to the balance, negative draws from it. */
    amountCents: p.integer(),
    balanceAfterCents: p.integer(),
    description: p.text(),
    reference: p.string(),
  },
});

export type CreditEntry = InferEntity<typeof CreditEntrySchema>;
