import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from './organization.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';
import type { Role } from '../http/permissions.ts';

export const MembershipSchema = defineEntity({
  name: 'Membership',
  extends: BaseSchema,
  uniques: [{ properties: ['organization', 'user'] }],
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    user: () => p.manyToOne(UserSchema).ref(),
    role: p.string().$type<Role>(),
  },
});

export type Membership = InferEntity<typeof MembershipSchema>;
