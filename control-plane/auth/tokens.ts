// Access tokens: HS256 JWTs (jose), 1 hour. Refresh tokens: opaque random strings, stored hashed.
import { createHash, randomBytes } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { UnauthenticatedError } from '../http/errors.ts';
import { deriveKey } from './keys.ts';

export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
const ISSUER = 'kiln';
const AUDIENCE = 'kiln-api';

export interface AccessClaims {
  userId: string;
  organizationId: string;
}

export function createAccessTokens(signingKey: string) {
  const key = deriveKey(signingKey, 'jwt');
  return {
    issue(claims: AccessClaims): Promise<string> {
      return new SignJWT({ org: claims.organizationId })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(claims.userId)
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .setExpirationTime(`${ACCESS_TOKEN_SECONDS}s`)
        .sign(key);
    },
    async verify(token: string): Promise<AccessClaims> {
      try {
        const { payload } = await jwtVerify(token, key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
        if (typeof payload.sub !== 'string' || typeof payload.org !== 'string') throw new UnauthenticatedError('Invalid API key');
        return { userId: payload.sub, organizationId: payload.org };
      } catch (error) {
        if (error instanceof errors.JWTExpired) throw new UnauthenticatedError('Token expired');
        throw new UnauthenticatedError('Invalid API key');
      }
    },
  };
}

export type AccessTokens = ReturnType<typeof createAccessTokens>;

export function newRefreshToken(): string {
  return `rt_${randomBytes(32).toString('base64url')}`;
}

/** Credentials with 190+ bits of entropy: a plain SHA-256 is enough and keeps lookups indexable. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A single-use token sent by e-mail (invitations, address confirmations): 256 random bits, stored hashed. */
export function newMailedToken(kind: 'invite' | 'verify'): string {
  return `${kind}_${randomBytes(32).toString('base64url')}`;
}
