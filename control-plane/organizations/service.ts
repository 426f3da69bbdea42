// Organizations and memberships: created at sign-up; looked up when a credential is resolved.
import { CreditEntrySchema } from '../billing/credit-entry.entity.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { FREE_PLAN_CREDITS_CENTS } from '../../catalog/plans.ts';
import { newId } from '../../lib/ids.ts';
import { isBuiltInRole, ROLE_PERMISSIONS, type OrganizationPermission, type Role, type RoleId } from '../core/permissions.ts';
import { MembershipSchema } from './membership.entity.ts';
import type { Plan } from '../../catalog/plans.ts';
import { OrganizationSchema, type Organization, type Region } from './organization.entity.ts';

export const DEFAULT_REGION: Region = 'us-east-1';

/**
 * A slug from the name plus the id's random part: unique without a look-up, and at most 63 characters
 * (a DNS label). Owners can change it in the organization settings.
 */
function defaultSlug(name: string, id: string): string {
  const base = name.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 42).replace(/^-+|-+$/g, '');
  return `${base || 'org'}-${id.slice('org_'.length)}`;
}

export function createOrganizationService(deps: { adminEmails: readonly string[] } = { adminEmails: [] }) {
  const admins = new Set(deps.adminEmails.map((e) => e.toLowerCase()));
  return {
    /** Persists (without flushing) an organization on the free plan with its owner. */
    create(em: EntityManager, input: { name: string; ownerId: string }): Organization {
      const id = newId('org');
      const organization = em.create(OrganizationSchema, {
        id,
        name: input.name,
        slug: defaultSlug(input.name, id),
        defaultRegion: DEFAULT_REGION,
        plan: 'free',
        creditsCents: FREE_PLAN_CREDITS_CENTS,
        lastTopUpCents: FREE_PLAN_CREDITS_CENTS,
      });
      // The grant opens the organization's ledger, so the balance is the sum of its lines from the start.
      em.create(CreditEntrySchema, {
        id: newId('cre'), organization, kind: 'grant', amountCents: FREE_PLAN_CREDITS_CENTS, balanceAfterCents: FREE_PLAN_CREDITS_CENTS,
        description: 'Free plan credits', reference: 'sign-up-grant',
      });
      em.create(MembershipSchema, { id: newId('mem'), organization, user: input.ownerId, role: 'owner' satisfies Role });
      return organization;
    },

    /**
     * The user's role in the organization with what it grants, and the organization's plan; null when not
     * a member. Runs on every authenticated request, so it reads one joined row without hydrating entities.
     */
    async access(em: EntityManager, userId: string, organizationId: string): Promise<OrganizationAccess | null> {
      const row = await em.createQueryBuilder(MembershipSchema, 'm')
        .join('m.organization', 'o')
        .join('m.user', 'u')
        .leftJoin('m.customRole', 'r')
        .select(['m.role', 'o.plan', 'u.email', 'u.ssoProvisioned as sso_provisioned', 'r.permissions'])
        .where({ user: userId, organization: organizationId })
        .execute<{ role: RoleId; plan: Plan; email: string; sso_provisioned: boolean; permissions: OrganizationPermission[] | null } | undefined>('get');
      if (!row) return null;
      // A custom role's row is there (foreign key on membership.custom_role_id); any other value grants nothing.
      const permissions = isBuiltInRole(row.role) ? ROLE_PERMISSIONS[row.role] : row.permissions ?? [];
      // An account an identity provider created is not trusted with a listed administrator's address.
      const platformAdmin = admins.has(row.email.toLowerCase()) && !row.sso_provisioned;
      return { role: row.role, permissions, plan: row.plan, platformAdmin };
    },
  };
}

/** What a user may do in one organization; `platformAdmin` comes from KILN_ADMIN_EMAILS, not the organization. */
export interface OrganizationAccess {
  role: RoleId;
  permissions: readonly OrganizationPermission[];
  plan: Plan;
  platformAdmin: boolean;
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
