import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

export const UserSchema = defineEntity({
  name: 'User',
  extends: BaseSchema,
  properties: {
    /** Stored lower-cased, so sign-in is case-insensitive. */
    email: p.string().unique(),
    name: p.string(),
    /** argon2id encoded hash (salt and parameters included). */
    passwordHash: p.string().hidden(),
    /**
     * Created by an organization's identity provider (SSO just-in-time provisioning): its address is only as
     * true as that provider says, so it never makes a platform administrator.
     */
    ssoProvisioned: p.boolean().default(false),
  },
});

export type User = InferEntity<typeof UserSchema>;
