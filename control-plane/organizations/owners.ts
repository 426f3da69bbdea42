// The owner rules, in one place for every route that changes memberships: only an owner makes or unmakes an
// owner, and an organization always keeps at least one.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { ForbiddenError, invalidField } from '../core/errors.ts';
import type { RoleId } from '../core/permissions.ts';
import { MembershipSchema } from './membership.entity.ts';

/**
 * Membership changes in one organization run one at a time (until the transaction ends), so two owners
 * demoting each other at once cannot leave it without an owner. An advisory lock, not a row lock, so nothing
 * else waits on it.
 */
export async function lockMemberships(em: EntityManager, organizationId: string): Promise<void> {
  await em.execute(`select pg_advisory_xact_lock(hashtext('membership'), hashtext(?))`, [organizationId]);
}

/** 403 unless the caller is an owner, when the change makes or unmakes an owner (`to` null: removal). */
export function assertMayChangeOwner(principal: Principal, from: RoleId | null, to: RoleId | null): void {
  if (from !== to && (from === 'owner' || to === 'owner') && principal.role !== 'owner') {
    throw new ForbiddenError('Insufficient permissions: only an owner makes or unmakes an owner');
  }
}

/** 422 on `field` when the member is the organization's last owner; call it after lockMemberships. */
export async function assertNotLastOwner(em: EntityManager, organizationId: string, memberRole: RoleId, field: string): Promise<void> {
  if (memberRole !== 'owner') return;
  if (await em.count(MembershipSchema, { organization: organizationId, role: 'owner' }) > 1) return;
  const message = 'the member is the organization\'s last owner: make someone else owner first';
  throw invalidField(field, message);
}
