import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { UserSchema } from '../auth/user.entity.ts';
import type { Role } from '../core/permissions.ts';

/** Stored states; `expired` is derived (pending past `expiresAt`). */
export const INVITATION_STATES = ['pending', 'accepted', 'declined', 'revoked'] as const;
export type InvitationState = (typeof INVITATION_STATES)[number];

/** An invitation to join an organization, answered once through the token mailed to `email`. */
export const InvitationSchema = defineEntity({
  name: 'Invitation',
  extends: BaseSchema,
  indexes: [{ properties: ['organization', 'createdAt'] }],
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    /** Lower-cased. */
    email: p.string(),
    role: p.string().$type<Role>(),
    invitedBy: () => p.manyToOne(UserSchema).ref(),
    /** SHA-256 of the token; the token itself exists only in the e-mail. A resend replaces it. */
    tokenHash: p.string().unique(),
    expiresAt: p.datetime(),
    state: p.string().$type<InvitationState>(),
    answeredAt: p.datetime().nullable(),
  },
});

export type Invitation = InferEntity<typeof InvitationSchema>;
