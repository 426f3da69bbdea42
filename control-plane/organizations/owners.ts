// The last-owner rule, in one place for every route that changes memberships (team members, enterprise
// assignments): an organization always keeps at least one owner.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ValidationError } from '../http/errors.ts';
import { MembershipSchema } from './membership.entity.ts';
import { OrganizationSchema } from './organization.entity.ts';

/**
 * Refuses (422) to remove (`newRole` null) or demote the organization's last owner. Call it inside the
 * transaction that makes the change: it locks the organization row, so two owners demoting each other
 * at once cannot both pass.
 */
export async function assertOwnerRemains(em: EntityManager, organizationId: string, userId: string, newRole: string | null): Promise<void> {
  if (newRole === 'owner') return;
  await em.findOneOrFail(OrganizationSchema, organizationId, { lockMode: LockMode.PESSIMISTIC_WRITE });
  const membership = await em.findOne(MembershipSchema, { organization: organizationId, user: userId }, { refresh: true });
  if (membership?.role !== 'owner') return;
  const owners = await em.count(MembershipSchema, { organization: organizationId, role: 'owner' });
  if (owners <= 1) {
    const field = newRole === null ? 'userId' : 'role';
    const message = 'the last owner of an organization cannot be removed or demoted; make someone else owner first';
    throw new ValidationError(message, { fields: [{ field, message }] });
  }
}
