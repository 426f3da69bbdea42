import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { UserSchema } from './user.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

// Refresh tokens rotate on every use; all tokens descended from one login share a family, so reuse of a
// rotated token (a sign of theft) revokes the whole family.
export const RefreshTokenSchema = defineEntity({
  name: 'RefreshToken',
  extends: BaseSchema,
  properties: {
    user: () => p.manyToOne(UserSchema).ref(),
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    familyId: p.string().index(),
    /** SHA-256 of the token; the token itself is never stored. */
    tokenHash: p.string().unique(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});

export type RefreshToken = InferEntity<typeof RefreshTokenSchema>;
