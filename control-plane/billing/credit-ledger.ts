// The one way a balance moves: a line in the credit ledger and the organization's balance, together, in the
// caller's transaction. The API (sign-up grants, paid checkouts) and the worker (metering debits) both call it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../lib/ids.ts';
import type { CreditEntryKind } from './credit-entry.entity.ts';

export interface CreditMovement {
  readonly organizationId: string;
  readonly kind: CreditEntryKind;
  /** Positive adds, negative draws. */
  readonly amountCents: number;
  readonly description: string;
  /** What caused it, unique per organization: a second movement with the same reference changes nothing. */
  readonly reference: string;
}

export interface AppliedMovement {
  /** false when the reference had moved the balance already. */
  readonly applied: boolean;
  readonly balanceCents: number;
}

/** Moves the balance once per reference. Run it inside a transaction: it locks the organization's row until the end. */
export async function moveCredits(em: EntityManager, movement: CreditMovement): Promise<AppliedMovement> {
  if (!Number.isSafeInteger(movement.amountCents)) throw new Error(`a credit movement is whole cents, not ${movement.amountCents}`);
  const [organization] = await em.execute<{ credits_cents: number }[]>(
    'SELECT credits_cents FROM organization WHERE id = ? FOR UPDATE', [movement.organizationId]);
  if (!organization) throw new Error(`organization ${movement.organizationId} not found`);
  const balance = organization.credits_cents + movement.amountCents;
  const inserted = await em.execute<{ id: string }[]>(
    `INSERT INTO credit_entry (id, created_at, organization_id, kind, amount_cents, balance_after_cents, description, reference)
     VALUES (?, now(), ?, ?, ?, ?, ?, ?) ON CONFLICT (organization_id, reference) DO NOTHING RETURNING id`,
    [newId('cre'), movement.organizationId, movement.kind, movement.amountCents, balance, movement.description, movement.reference]);
  if (inserted.length === 0) return { applied: false, balanceCents: organization.credits_cents };
  const funded = movement.kind === 'grant' || movement.kind === 'top_up';
  await em.execute(
    `UPDATE organization SET credits_cents = ?${funded ? `, last_top_up_cents = ?, low_balance_percent = NULL` : ''}
       ${balance > 0 ? ', credits_exhausted_at = NULL, credits_stopped_at = NULL' : ''} WHERE id = ?`,
    funded ? [balance, movement.amountCents, movement.organizationId] : [balance, movement.organizationId]);
  return { applied: true, balanceCents: balance };
}
