// Access tokens: HS256 JWTs (jose), 1 hour. Refresh tokens: opaque random strings, stored hashed.
import { createHash, randomBytes } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { UnauthenticatedError } from '../core/errors.ts';
import { randomString } from '../../lib/ids.ts';
import { deriveKey } from '../../lib/keys.ts';

export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
const ISSUER = 'kiln';
const AUDIENCE = 'kiln-api';

export interface AccessClaims {
  userId: string;
  organizationId: string;
}

/** Bounds the verified-token memo; the oldest entries go first. */
const MAX_VERIFIED = 10_000;

export function createAccessTokens(signingKey: string) {
  const key = deriveKey(signingKey, 'jwt');
  // Checking a signature costs ~170 µs of CPU, most of an authenticated read's own work; a token's claims
  // never change and it cannot be revoked before it expires, so a verified one is remembered (by its hash:
  // no credential is kept in memory) until its expiry.
  const verified = new Map<string, AccessClaims & { expiresAt: number }>();
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
      const digest = sha256(token);
      const known = verified.get(digest);
      if (known) {
        if (Date.now() < known.expiresAt) return { userId: known.userId, organizationId: known.organizationId };
        verified.delete(digest);
      }
      try {
        const { payload } = await jwtVerify(token, key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
        if (typeof payload.sub !== 'string' || typeof payload.org !== 'string' || typeof payload.exp !== 'number') throw new UnauthenticatedError('Invalid API key');
        const claims = { userId: payload.sub, organizationId: payload.org };
        if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value!);
        verified.set(digest, { ...claims, expiresAt: payload.exp * 1000 });
        return claims;
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

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A key shown once (API keys, service role keys): `<prefix>` then `length` Base62 characters. Only its SHA-256
 * is stored, with its first `shownLength` characters so a list can tell keys apart.
 */
export function keyFormat(prefix: string, length: number, shownLength: number) {
  const format = new RegExp(`^${prefix}[0-9A-Za-z]{${length}}$`);
  return {
    /** Whether a value has this format (checked before any look-up). */
    matches: (value: string): boolean => format.test(value),
    /** A new value, with what is stored of it. */
    issue() {
      const value = `${prefix}${randomString(length, BASE62)}`;
      return { value, keyHash: sha256(value), prefix: value.slice(0, shownLength) };
    },
  };
}
