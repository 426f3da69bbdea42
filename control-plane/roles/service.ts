// Custom roles and role assignments, per organization. Built-in roles are data in http/permissions.ts and
// read-only here. Nobody grants more than they hold: a role created, changed, deleted or assigned, and the
// role a member holds before a change, must lie within the caller's own permissions (role narrowed by
// scope). Only an owner makes or unmakes an owner, and an organization always keeps one.
import type { CredentialCache } from '../auth/credential-cache.ts';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { RefreshTokenSchema } from '../auth/refresh-token.entity.ts';
import { ApiKeySchema } from '../api-keys/api-key.entity.ts';
import { newId } from '../../lib/ids.ts';
import { ConflictError, InUseError, NotFoundError, ValidationError, invalidField } from '../core/errors.ts';
import {
  isBuiltInRole, ORGANIZATION_PERMISSIONS, ROLE_PERMISSIONS, ROLES, type OrganizationPermission, type Role, type RoleId,
} from '../core/permissions.ts';
import { MembershipSchema, type Membership } from '../organizations/membership.entity.ts';
import { assertWithinCaller } from '../organizations/grants.ts';
import { assertMayChangeOwner, assertNotLastOwner, lockMemberships } from '../organizations/owners.ts';
import { CustomRoleSchema, type CustomRole } from './custom-role.entity.ts';
import type { AssignmentViewBody, AssignRoleInput, RoleInput, RoleViewBody } from './schemas.ts';

const BUILT_IN_DESCRIPTIONS: Readonly<Record<Role, string>> = {
  owner: 'Everything in the organization; only owners make or unmake owners, and an organization always keeps one.',
  admin: 'Everything in the organization except making or unmaking owners.',
  member: 'Deploys models and reads the organization.',
  viewer: 'Reads deployments and the organization.',
};

interface ResolvedRole {
  id: RoleId;
  name: string;
  permissions: readonly OrganizationPermission[];
}

export interface RoleServiceDeps {
  /** Resolved credentials cached by this replica: dropped when a role or an assignment changes. */
  credentials: Pick<CredentialCache, 'forget'>;
}

export function createRoleService(deps: RoleServiceDeps) {
  async function findCustom(em: EntityManager, principal: Principal, id: string, lockMode?: LockMode): Promise<CustomRole> {
    if (isBuiltInRole(id)) {
      const message = `${id} is a built-in role and cannot be changed`;
      throw new ValidationError(`Invalid path parameter id: ${message}`, { fields: [{ field: 'id', message }] });
    }
    const role = await em.findOne(CustomRoleSchema, { id, organization: principal.organizationId }, lockMode ? { lockMode } : {});
    if (!role) throw new NotFoundError(`Role ${id} not found`);
    return role;
  }

  /** A built-in role or one of the organization's custom roles; anything else (another organization's) is 404. */
  async function resolve(em: EntityManager, principal: Principal, id: string, lockMode?: LockMode): Promise<ResolvedRole> {
    if (isBuiltInRole(id)) return { id, name: id, permissions: ROLE_PERMISSIONS[id] };
    const role = await findCustom(em, principal, id, lockMode);
    return { id: role.id as RoleId, name: role.name, permissions: role.permissions };
  }

  function validated(principal: Principal, input: RoleInput) {
    if (isBuiltInRole(input.name.toLowerCase())) {
      const message = 'must not be the name of a built-in role';
      throw invalidField('name', message);
    }
    // Stored once each, in the permission table's order.
    const permissions = ORGANIZATION_PERMISSIONS.filter((p) => input.permissions.includes(p));
    assertWithinCaller(principal, permissions, 'the role');
    return { name: input.name, description: input.description ?? null, permissions };
  }

  async function flushNamed(em: EntityManager, name: string): Promise<void> {
    await em.flush().catch((error: unknown) => {
      if (error instanceof Error && error.name === 'UniqueConstraintViolationException') {
        throw new ConflictError(`A role named ${name} already exists in this organization`, { field: 'name' });
      }
      throw error;
    });
  }

  async function findMember(em: EntityManager, principal: Principal, userId: string): Promise<Membership> {
    const member = await em.findOne(MembershipSchema, { organization: principal.organizationId, user: userId }, { populate: ['user'] });
    if (!member) throw new NotFoundError(`User ${userId} is not a member of this organization`);
    return member;
  }

  return {
    async list(em: EntityManager, principal: Principal): Promise<RoleViewBody[]> {
      const custom = await em.find(CustomRoleSchema, { organization: principal.organizationId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
      return [
        ...ROLES.map((id) => ({ id, name: id, description: BUILT_IN_DESCRIPTIONS[id], builtIn: true, permissions: [...ROLE_PERMISSIONS[id]] })),
        ...custom.map(view),
      ];
    },

    async create(em: EntityManager, principal: Principal, input: RoleInput): Promise<RoleViewBody> {
      const role = em.create(CustomRoleSchema, { id: newId('role'), organization: principal.organizationId, ...validated(principal, input) });
      await flushNamed(em, input.name);
      return view(role);
    },

    /** Replaces a custom role's name, description and permissions; its members act with them at once. */
    async update(em: EntityManager, principal: Principal, id: string, input: RoleInput): Promise<RoleViewBody> {
      const role = await findCustom(em, principal, id);
      assertWithinCaller(principal, role.permissions, 'the role');
      Object.assign(role, validated(principal, input));
      await flushNamed(em, input.name);
      // Its members act with the new permissions at once on this replica.
      deps.credentials.forget({ organizationId: principal.organizationId });
      return view(role);
    },

    /** Refused (409) while members hold the role: they are assigned another one first, by someone who decides which. */
    async remove(em: EntityManager, principal: Principal, id: string): Promise<{ id: string; deleted: true }> {
      const role = await findCustom(em, principal, id);
      assertWithinCaller(principal, role.permissions, 'the role');
      const inUse = (members: number) => new InUseError(`Role ${role.name} is held by ${members === 1 ? 'a member' : `${members} members`}: assign them another role first`, { members });
      const holders = await em.count(MembershipSchema, { organization: principal.organizationId, role: id as RoleId });
      if (holders) throw inUse(holders);
      em.remove(role);
      // An assignment committed since the count still holds the role: the foreign key refuses the delete.
      await em.flush().catch((error: unknown) => {
        if (error instanceof Error && error.name === 'ForeignKeyConstraintViolationException') throw inUse(1);
        throw error;
      });
      return { id, deleted: true };
    },

    async assignments(em: EntityManager, principal: Principal, filter: { roleId?: string | undefined }): Promise<AssignmentViewBody[]> {
      if (filter.roleId !== undefined) await resolve(em, principal, filter.roleId);
      const rows = await em.createQueryBuilder(MembershipSchema, 'm')
        .join('m.user', 'u')
        .leftJoin('m.customRole', 'r')
        .select(['m.role', 'u.id', 'u.email', 'u.name', 'r.name as role_name'])
        .where({ organization: principal.organizationId, ...(filter.roleId !== undefined ? { role: filter.roleId as RoleId } : {}) })
        .orderBy({ createdAt: 'asc', id: 'asc' })
        .execute<{ role: RoleId; id: string; email: string; name: string; role_name: string | null }[]>('all');
      return rows.map((row) => ({ userId: row.id, email: row.email, name: row.name, roleId: row.role, roleName: row.role_name ?? row.role }));
    },

    /** Gives a member of the organization a built-in or custom role in place of the one they hold. */
    async assign(em: EntityManager, principal: Principal, input: AssignRoleInput): Promise<AssignmentViewBody> {
      const assignment = await em.transactional(async (tx) => {
        await lockMemberships(tx, principal.organizationId);
        const member = await findMember(tx, principal, input.userId);
        // Shared lock: the role cannot be deleted before this assignment commits.
        const target = await resolve(tx, principal, input.roleId, LockMode.PESSIMISTIC_READ);
        assertWithinCaller(principal, (await resolve(tx, principal, member.role)).permissions, 'the member\'s current role');
        assertWithinCaller(principal, target.permissions, 'the role');
        assertMayChangeOwner(principal, member.role, target.id);
        if (target.id !== 'owner') await assertNotLastOwner(tx, principal.organizationId, member.role, 'roleId');
        member.role = target.id;
        await tx.flush();
        const user = member.user.getEntity();
        return { userId: user.id, email: user.email, name: user.name, roleId: target.id, roleName: target.name };
      });
      deps.credentials.forget({ userId: input.userId, organizationId: principal.organizationId });
      return assignment;
    },

    /**
     * Takes the member's role away, and with it their membership: a member always holds exactly one role.
     * Their API keys and refresh tokens in the organization are revoked, so a later invitation does not
     * bring them back.
     */
    async unassign(em: EntityManager, principal: Principal, userId: string): Promise<{ userId: string; removed: true }> {
      const removed = await em.transactional(async (tx) => {
        await lockMemberships(tx, principal.organizationId);
        const member = await findMember(tx, principal, userId);
        assertWithinCaller(principal, (await resolve(tx, principal, member.role)).permissions, 'the member\'s current role');
        assertMayChangeOwner(principal, member.role, null);
        await assertNotLastOwner(tx, principal.organizationId, member.role, 'userId');
        const now = new Date();
        await tx.nativeUpdate(ApiKeySchema, { organization: principal.organizationId, user: userId, revokedAt: null }, { revokedAt: now });
        await tx.nativeUpdate(RefreshTokenSchema, { organization: principal.organizationId, user: userId, revokedAt: null }, { revokedAt: now });
        tx.remove(member);
        await tx.flush();
        return { userId, removed: true as const };
      });
      deps.credentials.forget({ userId, organizationId: principal.organizationId });
      return removed;
    },
  };
}

function view(role: CustomRole): RoleViewBody {
  return { id: role.id, name: role.name, description: role.description ?? null, builtIn: false, permissions: [...role.permissions] };
}

export type RoleService = ReturnType<typeof createRoleService>;
