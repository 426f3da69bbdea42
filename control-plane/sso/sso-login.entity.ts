import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import type { SsoProviderKind } from './providers.ts';

/**
 * One SSO login in progress: what the callback must check, kept server-side. Single use (usedAt is set
 * by a conditional update) and short-lived (expiresAt).
 */
export const SsoLoginSchema = defineEntity({
  name: 'SsoLogin',
  extends: BaseSchema,
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    provider: p.string().$type<SsoProviderKind>(),
    /** SHA-256 of the `state` sent to the identity provider; the value itself travels in the URL only. */
    stateHash: p.string().unique(),
    nonce: p.string(),
    /** The PKCE code verifier, sealed like every secret Kiln reads back. */
    sealedCodeVerifier: p.text(),
    /** The redirect_uri of the authorization request, which the token request must repeat. */
    redirectUri: p.text(),
    expiresAt: p.datetime().index(),
    usedAt: p.datetime().nullable(),
  },
});

export type SsoLogin = InferEntity<typeof SsoLoginSchema>;
