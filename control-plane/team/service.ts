// Team: members with their roles, and invitations. An invitation's token is mailed, never returned by the
// API, stored as a SHA-256 hash, valid 7 days and answered once (accept or decline); a resend replaces it.
// Accepting signs the invitee in (existing account, by password) or up (new account), adds the
// membership and answers with a login session. Only an owner may grant or take away the owner role, and
// the last owner stays (organizations/owners.ts).
import { ROLE_PERMISSIONS } from '../core/permissions.ts';
import { assertWithinCaller } from '../organizations/grants.ts';
import { assertMayChangeOwner } from '../organizations/owners.ts';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import type { LoginSessionBody } from '../auth/schemas.ts';
import type { AuthService } from '../auth/service.ts';
import { newMailedToken, sha256 } from '../auth/tokens.ts';
import { UserSchema } from '../auth/user.entity.ts';
import { newId } from '../../lib/ids.ts';
import { BadRequestError, ConflictError, NotFoundError, invalidField } from '../core/errors.ts';
import type { Mailer } from '../mail/mailer.ts';
import { MembershipSchema } from '../organizations/membership.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { InvitationSchema, type Invitation } from './invitation.entity.ts';
import type {
  AcceptInvitationInput, InvitationPreviewBody, InvitationViewBody, InviteInput, MemberViewBody, UpdateInvitationInput,
} from './schemas.ts';

export const INVITATION_SECONDS = 7 * 24 * 3600;

export interface TeamServiceDeps {
  mailer: Mailer;
  /** Start of the links in e-mails. */
  publicUrl: string;
  auth: Pick<AuthService, 'verifyPassword' | 'createUser' | 'session'>;
}


export function createTeamService(deps: TeamServiceDeps) {
  async function findInvitation(em: EntityManager, principal: Principal, id: string): Promise<Invitation> {
    const invitation = await em.findOne(InvitationSchema, { id, organization: principal.organizationId });
    if (!invitation) throw new NotFoundError(`Invitation ${id} not found`);
    return invitation;
  }

  /** The invitation a token stands for, if it can still be answered; otherwise a 422 saying why. */
  async function answerable(em: EntityManager, token: string): Promise<Invitation> {
    const invitation = await em.findOne(InvitationSchema, { tokenHash: sha256(token) }, { populate: ['organization', 'invitedBy'] });
    if (!invitation) throw new NotFoundError('Invitation not found');
    const status = statusOf(invitation);
    if (status !== 'pending') throw invalidField('token', `this invitation has ${status === 'expired' ? 'expired' : `already been ${status}`}`);
    return invitation;
  }

  /** Marks a pending, unexpired invitation answered; of two concurrent answers exactly one wins. */
  async function claim(em: EntityManager, invitation: Invitation, state: 'accepted' | 'declined'): Promise<void> {
    const now = new Date();
    const claimed = await em.nativeUpdate(InvitationSchema, { id: invitation.id, state: 'pending', expiresAt: { $gt: now } }, { state, answeredAt: now });
    if (claimed === 0) throw invalidField('token', 'this invitation has already been answered');
  }

  /** Mails the invitee the accept link; called inside the transaction that stored the token's hash. */
  async function mail(em: EntityManager, invitation: Invitation, token: string, principal: Principal): Promise<void> {
    const inviter = await em.findOneOrFail(UserSchema, principal.userId);
    const organization = await em.findOneOrFail(OrganizationSchema, principal.organizationId);
    await deps.mailer.send({
      to: invitation.email,
      subject: `${inviter.name} invited you to join ${organization.name} on Kiln`,
      text: [
        `${inviter.name} (${inviter.email}) invited you to join the organization ${organization.name} on Kiln as ${invitation.role}.`,
        '',
        `Accept or decline the invitation here (the link works once, until ${invitation.expiresAt.toISOString()}):`,
        '',
        `${deps.publicUrl}/invite/${token}`,
        '',
        'If you did not expect this invitation, ignore this message.',
      ].join('\n'),
    });
  }

  return {
    async members(em: EntityManager, principal: Principal): Promise<MemberViewBody[]> {
      const memberships = await em.find(MembershipSchema, { organization: principal.organizationId }, { populate: ['user'], orderBy: { createdAt: 'asc', id: 'asc' } });
      return memberships.map((m) => ({ userId: m.user.id, name: m.user.$.name, email: m.user.$.email, role: m.role, joinedAt: m.createdAt.toISOString() }));
    },

    async invite(em: EntityManager, principal: Principal, input: InviteInput): Promise<InvitationViewBody> {
      assertMayChangeOwner(principal, null, input.role);
      assertWithinCaller(principal, ROLE_PERMISSIONS[input.role], `the ${input.role} role`);
      const email = input.email.toLowerCase();
      const member = await em.count(MembershipSchema, { organization: principal.organizationId, user: { email } });
      if (member) throw new ConflictError(`${email} is already a member of this organization`, { field: 'email' });
      const pending = await em.count(InvitationSchema, { organization: principal.organizationId, email, state: 'pending', expiresAt: { $gt: new Date() } });
      if (pending) throw new ConflictError(`${email} already has a pending invitation: resend it instead`, { field: 'email' });
      return em.transactional(async (tx) => {
        const { token, ...secret } = newInvitationToken();
        const invitation = tx.create(InvitationSchema, {
          id: newId('inv'), organization: principal.organizationId, email, role: input.role, invitedBy: principal.userId, state: 'pending', ...secret,
        });
        await tx.flush();
        await mail(tx, invitation, token, principal);
        return view(invitation);
      });
    },

    async invitations(em: EntityManager, principal: Principal): Promise<InvitationViewBody[]> {
      const invitations = await em.find(InvitationSchema, { organization: principal.organizationId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
      return invitations.map(view);
    },

    /** Changes the role of, or resends, an invitation nobody has answered yet (an expired one included). */
    async updateInvitation(em: EntityManager, principal: Principal, id: string, input: UpdateInvitationInput): Promise<InvitationViewBody> {
      return em.transactional(async (tx) => {
        const invitation = await findInvitation(tx, principal, id);
        if (invitation.state !== 'pending') throw invalidField('id', `this invitation has already been ${invitation.state}`);
        if (input.role !== undefined) {
          assertMayChangeOwner(principal, invitation.role, input.role);
          assertWithinCaller(principal, ROLE_PERMISSIONS[input.role], `the ${input.role} role`);
          invitation.role = input.role;
        }
        const resent = input.resend ? newInvitationToken() : undefined;
        if (resent) Object.assign(invitation, { tokenHash: resent.tokenHash, expiresAt: resent.expiresAt });
        await tx.flush();
        if (resent) await mail(tx, invitation, resent.token, principal);
        return view(invitation);
      });
    },

    async revokeInvitation(em: EntityManager, principal: Principal, id: string): Promise<InvitationViewBody> {
      const invitation = await findInvitation(em, principal, id);
      if (invitation.state !== 'pending') throw invalidField('id', `this invitation has already been ${invitation.state}`);
      // Only while still pending: an accept committed meanwhile keeps its answer.
      const answeredAt = new Date();
      if (!await em.nativeUpdate(InvitationSchema, { id, state: 'pending' }, { state: 'revoked', answeredAt })) {
        throw invalidField('id', 'this invitation has just been answered');
      }
      Object.assign(invitation, { state: 'revoked', answeredAt });
      return view(invitation);
    },

    /** What the invitee sees before answering (public: the token is the credential). */
    async preview(em: EntityManager, token: string): Promise<InvitationPreviewBody> {
      const invitation = await answerable(em, token);
      const organization = await invitation.organization.loadOrFail();
      return {
        organization: { name: organization.name, slug: organization.slug },
        email: invitation.email,
        role: invitation.role,
        invitedBy: { name: (await invitation.invitedBy.loadOrFail()).name },
        expiresAt: invitation.expiresAt.toISOString(),
        accountExists: (await em.count(UserSchema, { email: invitation.email })) > 0,
      };
    },

    /** Signs the invitee in (existing account) or up (new account), adds the membership, answers a session in that organization. */
    async accept(em: EntityManager, token: string, input: AcceptInvitationInput): Promise<LoginSessionBody> {
      return em.transactional(async (tx) => {
        const invitation = await answerable(tx, token);
        const organizationId = invitation.organization.id;
        const existing = await tx.findOne(UserSchema, { email: invitation.email });
        let user;
        if (existing) {
          user = await deps.auth.verifyPassword(tx, { email: invitation.email, password: input.password });
          if (await tx.count(MembershipSchema, { organization: organizationId, user: user.id })) {
            throw new ConflictError('You are already a member of this organization');
          }
        } else {
          if (input.name === undefined) {
            const message = 'Required: no account exists for this address yet, so one is created with this name';
            throw invalidField('name', message, BadRequestError);
          }
          user = await deps.auth.createUser(tx, { email: invitation.email, name: input.name, password: input.password });
        }
        await claim(tx, invitation, 'accepted');
        tx.create(MembershipSchema, { id: newId('mem'), organization: organizationId, user: user.id, role: invitation.role });
        // The unique indexes settle a concurrent sign-up with the same address or a concurrent join.
        await tx.flush().catch((error: unknown) => {
          if (error instanceof UniqueConstraintViolationException) throw new ConflictError('An account or membership for this address was just created; sign in instead');
          throw error;
        });
        return deps.auth.session(tx, user, organizationId);
      });
    },

    async decline(em: EntityManager, token: string): Promise<{ declined: true }> {
      const invitation = await answerable(em, token);
      await claim(em, invitation, 'declined');
      return { declined: true as const };
    },
  };
}

/** A token for the e-mail, its hash for the database, and 7 days from now. */
function newInvitationToken() {
  const token = newMailedToken('invite');
  return { token, tokenHash: sha256(token), expiresAt: new Date(Date.now() + INVITATION_SECONDS * 1000) };
}

function statusOf(invitation: Invitation): InvitationViewBody['status'] {
  return invitation.state === 'pending' && invitation.expiresAt.getTime() <= Date.now() ? 'expired' : invitation.state;
}

function view(invitation: Invitation): InvitationViewBody {
  return {
    id: invitation.id, email: invitation.email, role: invitation.role, status: statusOf(invitation), invitedBy: invitation.invitedBy.id,
    createdAt: invitation.createdAt.toISOString(), expiresAt: invitation.expiresAt.toISOString(), answeredAt: invitation.answeredAt?.toISOString() ?? null,
  };
}

export type TeamService = ReturnType<typeof createTeamService>;
