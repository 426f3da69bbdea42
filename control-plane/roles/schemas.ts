import { z } from 'zod';
import { optionalOrgIdQuery } from '../core/organization-query.ts';
import { ORGANIZATION_PERMISSIONS } from '../core/permissions.ts';

const roleId = z.string().min(1).max(64).meta({ description: 'A built-in role (owner, admin, member, viewer) or a custom role id.', example: 'role_0123456789abcdefghij' });
const userId = z.string().min(1).max(64).meta({ example: 'usr_0123456789abcdefghij' });
const permission = z.enum(ORGANIZATION_PERMISSIONS);

export const RoleRequest = z.strictObject({
  name: z.string().trim().min(1).max(64).meta({ example: 'Auditor' }),
  description: z.string().trim().max(500).nullable().optional(),
  permissions: z.array(permission).max(100).meta({ description: 'Permissions from the permission table; platform administration (admin:*) is not an organization permission.' }),
}).meta({ id: 'RoleRequest' });

export const RoleIdParams = z.object({ id: roleId });
export const ListRolesQuery = z.object(optionalOrgIdQuery);

export const RoleView = z.object({
  id: roleId,
  name: z.string(),
  description: z.string().nullable(),
  builtIn: z.boolean().meta({ description: 'Built-in roles are read-only.' }),
  permissions: z.array(permission),
}).meta({ id: 'Role' });

export const DeletedRole = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'DeletedRole' });

export const AssignRoleRequest = z.strictObject({ userId, roleId }).meta({ id: 'AssignRoleRequest' });
export const ListAssignmentsQuery = z.object({ roleId: roleId.optional(), ...optionalOrgIdQuery });
const memberToRemove = userId.optional().meta({ description: 'The member: in the query or in the JSON body (either; both must agree).' });
export const RemoveAssignmentQuery = z.object({ userId: memberToRemove, ...optionalOrgIdQuery });
export const RemoveAssignmentRequest = z.strictObject({ userId: memberToRemove }).meta({ id: 'RemoveAssignmentRequest' });

export const AssignmentView = z.object({
  userId: z.string(),
  email: z.string(),
  name: z.string(),
  roleId,
  roleName: z.string(),
}).meta({ id: 'RoleAssignment' });

export const RemovedAssignment = z.object({ userId: z.string(), removed: z.literal(true) }).meta({ id: 'RemovedRoleAssignment' });

export type RoleInput = z.infer<typeof RoleRequest>;
export type RoleViewBody = z.infer<typeof RoleView>;
export type AssignRoleInput = z.infer<typeof AssignRoleRequest>;
export type AssignmentViewBody = z.infer<typeof AssignmentView>;
