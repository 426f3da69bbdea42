// Organizations and memberships: created at sign-up; looked up when a credential is resolved.
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../database/ids.ts';
import type { Role } from '../http/permissions.ts';
import { MembershipSchema, type Membership } from './membership.entity.ts';
import { OrganizationSchema, type Organization } from './organization.entity.ts';

/** A new organization's free-plan grant, in US cents: enough to try a deployment at once. */
export const FREE_PLAN_CREDITS_CENTS = 2_500;

export function createOrganizationService() {
  return {
    /** Persists (without flushing) an organization on the free plan with its owner. */
    create(em: EntityManager, input: { name: string; ownerId: string }): Organization {
      const organization = em.create(OrganizationSchema, {
        id: newId('org'),
        name: input.name,
        plan: 'free',
        creditsCents: FREE_PLAN_CREDITS_CENTS,
      });
      em.create(MembershipSchema, { id: newId('mem'), organization, user: input.ownerId, role: 'owner' satisfies Role });
      return organization;
    },

    /** The user's membership in the organization, with the organization loaded; null when not a member. */
    membership(em: EntityManager, userId: string, organizationId: string): Promise<Membership | null> {
      return em.findOne(MembershipSchema, { user: userId, organization: organizationId }, { populate: ['organization'] });
    },
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
