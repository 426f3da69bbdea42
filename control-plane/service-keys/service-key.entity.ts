import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';

// A platform credential, not an organization's: each request names the organization it acts on.
export const ServiceKeySchema = defineEntity({
  name: 'ServiceKey',
  extends: BaseSchema,
  properties: {
    name: p.string(),
    /** The platform administrator who created it; its requests are audited under this user. */
    createdBy: () => p.manyToOne(UserSchema).ref(),
    /** First characters of the value, so administrators can tell keys apart. */
    prefix: p.string(),
    /** SHA-256 of the value (240 random bits: a fast hash is safe). */
    keyHash: p.string().unique(),
    lastUsedAt: p.datetime().nullable(),
    rotatedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});

export type ServiceKey = InferEntity<typeof ServiceKeySchema>;
