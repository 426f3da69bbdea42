// Profile and organization settings. Changing one's e-mail address re-verifies it: the new address is
// pending until the token mailed to it is confirmed (single use, hashed at rest, 24 hours); sign-in keeps
// using the old address until then. Asking for one's current address, never confirmed, mails it a token too
// (the onboarding step that verifies the address).
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { newMailedToken, sha256 } from '../auth/tokens.ts';
import { UserSchema, type User } from '../auth/user.entity.ts';
import { newId } from '../../lib/ids.ts';
import { ConflictError, NotFoundError, invalidField, type ApiError } from '../core/errors.ts';
import { isAllowed, PERMISSIONS } from '../core/permissions.ts';
import type { Mailer } from '../mail/mailer.ts';
import { OrganizationSchema, type Organization } from '../organizations/organization.entity.ts';
import { EmailVerificationSchema } from './email-verification.entity.ts';
import type { OrganizationViewBody, ProfileViewBody, UpdateOrganizationInput, UpdateProfileInput } from './schemas.ts';

export const EMAIL_TOKEN_SECONDS = 24 * 3600;

export interface SettingsServiceDeps {
  mailer: Mailer;
  /** Start of the links in e-mails. */
  publicUrl: string;
}

export function createSettingsService(deps: SettingsServiceDeps) {
  /** A new address waiting for its confirmation (a confirmation of the current one is no change). */
  async function pendingEmail(em: EntityManager, user: User): Promise<string | null> {
    const open = await em.findOne(EmailVerificationSchema, { user: user.id, email: { $ne: user.email }, closedAt: null, expiresAt: { $gt: new Date() } }, { orderBy: { createdAt: 'desc' } });
    return open?.email ?? null;
  }

  /** The user, and what they may do in the organization the call acts in, with the credential it came with. */
  async function profile(em: EntityManager, user: User, principal: Principal): Promise<ProfileViewBody> {
    return {
      id: user.id, name: user.name, email: user.email, pendingEmail: await pendingEmail(em, user), createdAt: user.createdAt.toISOString(),
      role: principal.role,
      permissions: PERMISSIONS.filter((permission) => isAllowed(permission, principal.permissions, principal.scope, principal.platformAdmin)),
      platformAdmin: principal.platformAdmin,
    };
  }

  function closeOpenVerifications(em: EntityManager, userId: string) {
    return em.nativeUpdate(EmailVerificationSchema, { user: userId, closedAt: null }, { closedAt: new Date() });
  }

  async function assertEmailFree(em: EntityManager, email: string, userId: string) {
    if (await em.count(UserSchema, { email, id: { $ne: userId } })) {
      throw new ConflictError('An account with this email already exists', { field: 'email' });
    }
  }

  function tokenError(message: string): ApiError {
    return invalidField('token', message);
  }

  async function organization(em: EntityManager, principal: Principal): Promise<Organization> {
    return em.findOneOrFail(OrganizationSchema, principal.organizationId);
  }

  return {
    async getProfile(em: EntityManager, principal: Principal): Promise<ProfileViewBody> {
      return profile(em, await em.findOneOrFail(UserSchema, principal.userId), principal);
    },

    /** A changed e-mail address is mailed a confirmation token; nothing is kept if the mail cannot be sent. */
    async updateProfile(em: EntityManager, principal: Principal, input: UpdateProfileInput): Promise<ProfileViewBody> {
      return em.transactional(async (tx) => {
        const user = await tx.findOneOrFail(UserSchema, principal.userId);
        if (input.name !== undefined) user.name = input.name;
        const email = input.email?.toLowerCase();
        let token: string | undefined;
        if (email !== undefined) {
          // Asking for the current address again cancels a pending change (and confirms it, if it never was).
          await closeOpenVerifications(tx, user.id);
          const confirmedBefore = email === user.email && await tx.count(EmailVerificationSchema, { user: user.id, email, confirmedAt: { $ne: null } }) > 0;
          if (email !== user.email || !confirmedBefore) {
            if (email !== user.email) await assertEmailFree(tx, email, user.id);
            token = newMailedToken('verify');
            tx.create(EmailVerificationSchema, {
              id: newId('emv'), user: user.id, email, tokenHash: sha256(token), expiresAt: new Date(Date.now() + EMAIL_TOKEN_SECONDS * 1000),
            });
          }
        }
        await tx.flush();
        if (email && token) {
          const current = email === user.email;
          await deps.mailer.send({
            to: email,
            subject: current ? 'Confirm your Kiln e-mail address' : 'Confirm your new Kiln e-mail address',
            text: [
              `Hello ${user.name},`,
              '',
              current ? `Confirm that ${email} is the address of your Kiln account within 24 hours:` : `You asked to change the e-mail address of your Kiln account to ${email}. Confirm it within 24 hours:`,
              '',
              `${deps.publicUrl}/settings/profile/verify-email?token=${token}`,
              '',
              `(or, signed in, POST /v1/settings/profile/verify-email with {"token": "${token}"}).`,
              'If you did not ask for this, ignore this message: your address stays as it is.',
            ].join('\n'),
          });
        }
        return profile(tx, user, principal);
      });
    },

    /** Confirms a pending address with the mailed token: the caller must be the user who asked for it. */
    async verifyEmail(em: EntityManager, principal: Principal, token: string): Promise<ProfileViewBody> {
      return em.transactional(async (tx) => {
        const verification = await tx.findOne(EmailVerificationSchema, { tokenHash: sha256(token), user: principal.userId });
        if (!verification) throw new NotFoundError('Confirmation token not found');
        if (verification.confirmedAt) throw tokenError('this address has already been confirmed');
        if (verification.closedAt) throw tokenError('this token was replaced by a later change of address');
        if (verification.expiresAt.getTime() <= Date.now()) throw tokenError('this token has expired; change the address again for a new one');
        // Conditional update: of two concurrent confirmations exactly one wins.
        const now = new Date();
        const claimed = await tx.nativeUpdate(EmailVerificationSchema, { id: verification.id, closedAt: null }, { closedAt: now, confirmedAt: now });
        if (claimed === 0) throw tokenError('this address has already been confirmed');
        await assertEmailFree(tx, verification.email, principal.userId);
        const user = await tx.findOneOrFail(UserSchema, principal.userId);
        user.email = verification.email;
        await tx.flush().catch((error: unknown) => {
          if (error instanceof UniqueConstraintViolationException) throw new ConflictError('An account with this email already exists', { field: 'email' });
          throw error;
        });
        return profile(tx, user, principal);
      });
    },

    async getOrganization(em: EntityManager, principal: Principal): Promise<OrganizationViewBody> {
      return organizationView(await organization(em, principal));
    },

    async updateOrganization(em: EntityManager, principal: Principal, input: UpdateOrganizationInput): Promise<OrganizationViewBody> {
      const org = await organization(em, principal);
      if (input.plan !== undefined && input.plan !== org.plan) {
        const message = 'plan is read-only here: it changes through billing';
        throw invalidField('plan', message);
      }
      if (input.slug !== undefined && input.slug !== org.slug && await em.count(OrganizationSchema, { slug: input.slug })) {
        throw new ConflictError('This slug is taken', { field: 'slug' });
      }
      if (input.name !== undefined) org.name = input.name;
      if (input.slug !== undefined) org.slug = input.slug;
      if (input.contactEmail !== undefined) org.contactEmail = input.contactEmail?.toLowerCase() ?? null;
      if (input.defaultRegion !== undefined) org.defaultRegion = input.defaultRegion;
      if (input.unverifiedModels !== undefined) org.unverifiedModels = input.unverifiedModels;
      // The unique index settles two organizations claiming one slug at once.
      await em.flush().catch((error: unknown) => {
        if (error instanceof UniqueConstraintViolationException) throw new ConflictError('This slug is taken', { field: 'slug' });
        throw error;
      });
      return organizationView(org);
    },
  };
}

function organizationView(org: Organization): OrganizationViewBody {
  return {
    id: org.id, name: org.name, slug: org.slug, contactEmail: org.contactEmail ?? null, defaultRegion: org.defaultRegion,
    plan: org.plan, unverifiedModels: org.unverifiedModels, createdAt: org.createdAt.toISOString(),
  };
}

export type SettingsService = ReturnType<typeof createSettingsService>;
