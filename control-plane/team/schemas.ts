import { z } from 'zod';
import { ROLES } from '../core/permissions.ts';

const role = z.enum(ROLES).meta({ description: 'owner, admin, member or viewer. Only an owner may grant the owner role.' });
const id = z.string().max(64);

export const InviteRequest = z.object({ email: z.email().max(254).meta({ example: 'grace@example.com' }), role }).meta({ id: 'InviteRequest' });

export const UpdateInvitationRequest = z.object({
  role: role.optional(),
  resend: z.boolean().optional().meta({ description: 'true: mail a new token (the old one stops working) and restart the 7 days.' }),
}).refine((body) => body.role !== undefined || body.resend === true, { message: 'give a new role, or resend: true', path: ['role'] })
  .meta({ id: 'UpdateInvitationRequest' });

export const InvitationIdParams = z.object({ id });

export const InvitationTokenParams = z.object({
  token: z.string().regex(/^invite_[A-Za-z0-9_-]{43}$/, 'not an invitation token').meta({ description: 'The token from the invitation e-mail.' }),
});

export const AcceptInvitationRequest = z.object({
  name: z.string().trim().min(1).max(200).optional().meta({ description: 'Required when no account exists for the invited address.' }),
  password: z.string().min(8).max(256).meta({ description: 'The existing account\'s password, or the new account\'s (at least 8 characters).' }),
}).meta({ id: 'AcceptInvitationRequest' });

export const DeclineInvitationRequest = z.object({}).meta({ id: 'DeclineInvitationRequest' });

export const INVITATION_STATUSES = ['pending', 'expired', 'accepted', 'declined', 'revoked'] as const;

export const InvitationView = z.object({
  id: z.string().meta({ example: 'inv_0123456789abcdefghij' }),
  email: z.string(),
  role,
  status: z.enum(INVITATION_STATUSES),
  invitedBy: z.string().meta({ description: 'User id of the inviter.' }),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
  answeredAt: z.iso.datetime().nullable(),
}).meta({ id: 'Invitation' });

export const InvitationPreview = z.object({
  organization: z.object({ name: z.string(), slug: z.string() }),
  email: z.string(),
  role,
  invitedBy: z.object({ name: z.string() }),
  expiresAt: z.iso.datetime(),
  accountExists: z.boolean().meta({ description: 'true: accept with the account\'s password; false: accept with a name and a new password.' }),
}).meta({ id: 'InvitationPreview' });

export const DeclinedInvitation = z.object({ declined: z.literal(true) }).meta({ id: 'DeclinedInvitation' });

export const MemberView = z.object({
  userId: z.string(),
  name: z.string(),
  email: z.string(),
  role: z.string().meta({ description: 'A built-in role (owner, admin, member, viewer) or a custom role id (role_...).' }),
  joinedAt: z.iso.datetime(),
}).meta({ id: 'TeamMember' });


export type InviteInput = z.infer<typeof InviteRequest>;
export type UpdateInvitationInput = z.infer<typeof UpdateInvitationRequest>;
export type AcceptInvitationInput = z.infer<typeof AcceptInvitationRequest>;
export type InvitationViewBody = z.infer<typeof InvitationView>;
export type InvitationPreviewBody = z.infer<typeof InvitationPreview>;
export type MemberViewBody = z.infer<typeof MemberView>;
