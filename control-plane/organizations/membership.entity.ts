import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from './organization.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';
import { CustomRoleSchema } from '../roles/custom-role.entity.ts';
import type { RoleId } from '../core/permissions.ts';

export const MembershipSchema = defineEntity({
  name: 'Membership',
  extends: BaseSchema,
  uniques: [{ properties: ['organization', 'user'] }],
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    user: () => p.manyToOne(UserSchema).ref(),
    /** A built-in role's name or a custom role's id. */
    role: p.string().$type<RoleId>(),
    /** `role` when it names a custom role; computed by the database (see the Roles migration). */
    customRole: () => p.manyToOne(CustomRoleSchema).ref().nullable().generated(`(case when starts_with("role", 'role_') then "role" end) stored`),
  },
});

export type Membership = InferEntity<typeof MembershipSchema>;
