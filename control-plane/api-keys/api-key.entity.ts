import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';
import type { Scope } from '../core/permissions.ts';

export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  extends: BaseSchema,
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    /** The user who created the key; the key acts with that user's role, narrowed by its scope. */
    user: () => p.manyToOne(UserSchema).ref(),
    name: p.string(),
    scope: p.string().$type<Scope>(),
    /** First characters of the value, shown in listings so users can tell keys apart. */
    prefix: p.string(),
    /** SHA-256 of the value: keys are 190-bit random, so a fast hash is safe and lookups stay O(1). */
    keyHash: p.string().unique(),
    lastUsedAt: p.datetime().nullable(),
    /** Last rotation (null: never rotated since creation); keys unrotated for 90 days show in /v1/admin/security. */
    rotatedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});

export type ApiKey = InferEntity<typeof ApiKeySchema>;
