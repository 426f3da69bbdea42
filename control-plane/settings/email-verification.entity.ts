import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';

/**
 * A requested change of a user's e-mail address: the new address stays pending until the token mailed
 * to it is confirmed. Only the latest request of a user counts (a new one supersedes older ones).
 */
export const EmailVerificationSchema = defineEntity({
  name: 'EmailVerification',
  extends: BaseSchema,
  properties: {
    user: () => p.manyToOne(UserSchema).ref().index(),
    /** The new address, lower-cased. */
    email: p.string(),
    /** SHA-256 of the token; the token itself exists only in the e-mail. */
    tokenHash: p.string().unique(),
    expiresAt: p.datetime(),
    /** Set when confirmed, superseded or cancelled: the token then no longer works. */
    closedAt: p.datetime().nullable(),
    confirmedAt: p.datetime().nullable(),
  },
});

export type EmailVerification = InferEntity<typeof EmailVerificationSchema>;
