import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import type { OrganizationPermission } from '../core/permissions.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

/**
 * An organization's own role: a named set of permissions from the permission table. Memberships refer to
 * it by id in `membership.role`; the database keeps that reference valid (see the Roles migration).
 */
export const CustomRoleSchema = defineEntity({
  name: 'CustomRole',
  extends: BaseSchema,
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    name: p.string(),
    description: p.text().nullable(),
    permissions: p.json<OrganizationPermission[]>(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type CustomRole = InferEntity<typeof CustomRoleSchema>;
