// Sign-up, sign-in and refresh-token rotation. Sessions carry the user's default organization (the one
// created at sign-up, else the oldest membership).
import argon2 from 'argon2';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { newId } from '../../lib/ids.ts';
import { ConflictError, ForbiddenError, invalidField, InvalidCredentialsError, RateLimitedError, UnauthenticatedError } from '../core/errors.ts';
import { MembershipSchema } from '../organizations/membership.entity.ts';
import type { OrganizationService } from '../organizations/service.ts';
import { RefreshTokenSchema } from './refresh-token.entity.ts';
import type { Principal } from './principal.ts';
import type { ChangePasswordInput, LoginSessionBody, SigninInput, SignupInput, TokenPairBody } from './schemas.ts';
import { ACCESS_TOKEN_SECONDS, type AccessTokens, newRefreshToken, REFRESH_TOKEN_SECONDS, sha256 } from './tokens.ts';
import { UserSchema, type User } from './user.entity.ts';

export interface AuthServiceDeps {
  accessTokens: AccessTokens;
  organizations: Pick<OrganizationService, 'create'>;
  /** Counts failed sign-ins per account (see http/rate-limit.ts for its window). */
  signinFailures: RateLimiterAbstract;
}

// Verified against when the email is unknown, so both failures take the same time.
const DUMMY_HASH = await argon2.hash('kiln-timing-equaliser', { type: argon2.argon2id });

export function createAuthService(deps: AuthServiceDeps) {
  async function issuePair(em: EntityManager, userId: string, organizationId: string, familyId: string): Promise<TokenPairBody> {
    const refreshToken = newRefreshToken();
    em.create(RefreshTokenSchema, {
      id: newId('rtk'),
      user: userId,
      organization: organizationId,
      familyId,
      tokenHash: sha256(refreshToken),
      expiresAt: new Date(Date.now() + REFRESH_TOKEN_SECONDS * 1000),
    });
    await em.flush();
    return {
      access_token: await deps.accessTokens.issue({ userId, organizationId }),
      refresh_token: refreshToken,
      expires_in: ACCESS_TOKEN_SECONDS,
      token_type: 'bearer',
    };
  }

  async function session(em: EntityManager, user: User, organizationId: string): Promise<LoginSessionBody> {
    const pair = await issuePair(em, user.id, organizationId, newId('rtk'));
    return { ...pair, user: { id: user.id, email: user.email, organization_id: organizationId } };
  }

  /** The user whose email and password these are; failures count towards the per-account lock-out. */
  async function verifyPassword(em: EntityManager, input: SigninInput): Promise<User> {
    const email = input.email.toLowerCase();
    const failures = await deps.signinFailures.get(email);
    if (failures && failures.remainingPoints <= 0) throw tooManyAttempts(failures);
    const user = await em.findOne(UserSchema, { email });
    const valid = await argon2.verify(user?.passwordHash ?? DUMMY_HASH, input.password);
    if (!user || !valid) {
      await deps.signinFailures.consume(email).catch((rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) throw tooManyAttempts(rejection);
        throw rejection;
      });
      throw new InvalidCredentialsError('Invalid email or password');
    }
    await deps.signinFailures.delete(email);
    return user;
  }

  /** Persists (without flushing) a user with an argon2id password hash; `email` is lower-cased by the caller. */
  async function createUser(em: EntityManager, input: { email: string; name: string; password: string }): Promise<User> {
    const passwordHash = await argon2.hash(input.password, { type: argon2.argon2id });
    return em.create(UserSchema, { id: newId('usr'), email: input.email, name: input.name, passwordHash });
  }

  return {
    /** A login session for a user already authenticated another way (SSO). */
    session,
    verifyPassword,
    createUser,

    async signup(em: EntityManager, input: SignupInput): Promise<LoginSessionBody> {
      const email = input.email.toLowerCase();
      if (await em.count(UserSchema, { email })) throw new ConflictError('An account with this email already exists', { field: 'email' });
      const user = await createUser(em, { email, name: input.name, password: input.password });
      const organization = deps.organizations.create(em, { name: input.organizationName, ownerId: user.id });
      // The unique index settles a race between two sign-ups with one email.
      await em.flush().catch((error: unknown) => {
        if (error instanceof Error && error.name === 'UniqueConstraintViolationException') {
          throw new ConflictError('An account with this email already exists', { field: 'email' });
        }
        throw error;
      });
      return session(em, user, organization.id);
    },

    async signin(em: EntityManager, input: SigninInput): Promise<LoginSessionBody> {
      const user = await verifyPassword(em, input);
      const membership = await em.findOne(MembershipSchema, { user: user.id }, { orderBy: { createdAt: 'asc' } });
      if (!membership) throw new InvalidCredentialsError('Invalid email or password');
      return session(em, user, membership.organization.id);
    },

    /**
     * A new password for a signed-in user who knows the current one. Every session of the user ends (their
     * refresh tokens are revoked; access tokens lapse within the hour) and this call answers a new one. An API
     * key cannot do it: a leaked key must not be able to take the account.
     */
    async changePassword(em: EntityManager, principal: Principal, input: ChangePasswordInput): Promise<LoginSessionBody> {
      if (principal.apiKeyId) throw new ForbiddenError('A password is changed from a signed-in session, not with an API key');
      const user = await em.findOneOrFail(UserSchema, principal.userId);
      // A wrong current password counts towards the account's lock-out, as a failed sign-in does.
      await verifyPassword(em, { email: user.email, password: input.currentPassword }).catch((error: unknown) => {
        throw error instanceof InvalidCredentialsError ? invalidField('currentPassword', 'is not your current password') : error;
      });
      if (input.newPassword === input.currentPassword) throw invalidField('newPassword', 'must differ from your current password');
      user.passwordHash = await argon2.hash(input.newPassword, { type: argon2.argon2id });
      await em.nativeUpdate(RefreshTokenSchema, { user: user.id, revokedAt: null }, { revokedAt: new Date() });
      return session(em, user, principal.organizationId);
    },

    /** Rotates a refresh token; presenting one already rotated revokes its whole family. */
    async refresh(em: EntityManager, refreshToken: string): Promise<TokenPairBody> {
      const token = await em.findOne(RefreshTokenSchema, { tokenHash: sha256(refreshToken) });
      if (!token || token.revokedAt) throw new UnauthenticatedError('Invalid API key');
      if (token.expiresAt.getTime() <= Date.now()) throw new UnauthenticatedError('Token expired');
      // Conditional update: of two concurrent uses, exactly one wins and the other counts as reuse.
      const claimed = await em.nativeUpdate(RefreshTokenSchema, { id: token.id, usedAt: null }, { usedAt: new Date() });
      if (claimed === 0) {
        await em.nativeUpdate(RefreshTokenSchema, { familyId: token.familyId, revokedAt: null }, { revokedAt: new Date() });
        throw new UnauthenticatedError('Invalid API key');
      }
      const membership = await em.count(MembershipSchema, { user: token.user.id, organization: token.organization.id });
      if (!membership) throw new UnauthenticatedError('Invalid API key');
      return issuePair(em, token.user.id, token.organization.id, token.familyId);
    },
  };
}

function tooManyAttempts(res: RateLimiterRes): RateLimitedError {
  const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return new RateLimitedError('Too many failed sign-in attempts; try again later', { retry_after: seconds }, { 'Retry-After': String(seconds) });
}

export type AuthService = ReturnType<typeof createAuthService>;
