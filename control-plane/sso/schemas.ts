import { z } from 'zod';
import { optionalOrgIdQuery, orgIdQuery } from '../core/organization-query.ts';
import { SSO_PROVIDER_KINDS } from './providers.ts';
import { ORGANIZATION_ID_PATTERN } from '../../lib/ids.ts';

/** Roles SSO may give a new member; ownership is never handed out by an identity provider. */
export const SSO_DEFAULT_ROLES = ['admin', 'member', 'viewer'] as const;

const provider = z.enum(SSO_PROVIDER_KINDS).meta({ description: 'oidc, okta, azure-ad or google-workspace (GET /v1/enterprise/sso/providers).' });
// OpenID Connect issuers are https URLs without query or fragment (OpenID Connect Discovery 1.0, section 2).
const issuer = z.url({ protocol: /^https$/ }).max(2048)
  .refine((value) => !/[?#]/.test(value), 'An issuer has no query or fragment')
  .meta({ example: 'https://login.microsoftonline.com/00000000-0000-0000-0000-000000000000/v2.0' });
const clientId = z.string().trim().min(1).max(255);
const clientSecret = z.string().min(1).max(2048);
// The length as its own rule, not a lookahead in the pattern: the document then states both in terms any
// client (and a generator of test data) understands.
const domain = z.string().trim().toLowerCase().max(253)
  .regex(/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'Expected a domain name such as example.com');

const fields = {
  provider: provider.default('oidc'),
  issuer,
  clientId,
  allowedDomains: z.array(domain).min(1).max(100).meta({ description: 'E-mail domains whose users may sign in with this provider.' }),
  defaultRole: z.enum(SSO_DEFAULT_ROLES).default('member').meta({ description: 'Role of members created by just-in-time provisioning.' }),
  jitProvisioning: z.boolean().default(false).meta({ description: 'Create unknown users (and their membership) at their first SSO login.' }),
};

export const CreateSsoConfigurationRequest = z.strictObject({ ...fields, clientSecret })
  .meta({ id: 'CreateSsoConfigurationRequest' });

export const SaveSsoConfigurationRequest = z.strictObject({
  ...fields,
  clientSecret: clientSecret.optional().meta({ description: 'Kept as stored when absent; required when no configuration exists yet.' }),
}).meta({ id: 'SaveSsoConfigurationRequest' });

export const OrgQuery = z.object(orgIdQuery);
export const OptionalOrgQuery = z.object(optionalOrgIdQuery);

// Public: nothing authenticates this orgId, so its form is checked here.
export const SsoLoginQuery = z.object({
  orgId: orgIdQuery.orgId.regex(ORGANIZATION_ID_PATTERN, 'Expected an organization id').meta({ description: 'The organization whose identity provider signs the user in.' }),
});

export const SsoCallbackParams = z.object({ provider });

/** What the identity provider appends to the redirect URI (RFC 6749 section 4.1.2, RFC 9207). */
export const SsoCallbackQuery = z.object({
  state: z.string().min(1).max(512),
  code: z.string().max(4096).optional(),
  iss: z.string().max(2048).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
  orgId: z.string().optional().meta({ description: 'When present, must be the organization the login was started for.' }),
});

export const VerifySsoRequest = z.strictObject({
  issuer,
  clientId: clientId.optional(),
  clientSecret: clientSecret.optional(),
  provider: provider.optional(),
}).meta({ id: 'VerifySsoRequest' });

export const SsoConfigurationView = z.object({
  id: z.string().meta({ example: 'sso_0123456789abcdefghij' }),
  organizationId: z.string(),
  provider,
  issuer: z.string(),
  clientId: z.string(),
  allowedDomains: z.array(z.string()),
  defaultRole: z.enum(SSO_DEFAULT_ROLES),
  jitProvisioning: z.boolean(),
  redirectUri: z.string().meta({ description: 'Register this redirect URI at the identity provider.' }),
  loginUrl: z.string().meta({ description: 'Where members start an SSO login (a browser link).' }),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
}).meta({ id: 'SsoConfiguration' });

export const DeletedSsoConfiguration = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'DeletedSsoConfiguration' });

export const SSO_CHECKS = ['reachable', 'openid_configuration', 'authorization_code', 'pkce_s256', 'client_credentials'] as const;

export const SsoVerification = z.object({
  issuer: z.string(),
  ok: z.boolean().meta({ description: 'No check failed.' }),
  checks: z.array(z.object({
    name: z.enum(SSO_CHECKS),
    status: z.enum(['passed', 'failed', 'warning', 'skipped']),
    message: z.string(),
  })),
}).meta({ id: 'SsoVerification' });

export const SsoProviderView = z.object({
  id: provider,
  name: z.string(),
  issuerTemplate: z.string().nullable(),
  parameters: z.array(z.string()),
  notes: z.string(),
}).meta({ id: 'SsoProvider' });

export type CreateSsoConfigurationInput = z.infer<typeof CreateSsoConfigurationRequest>;
export type SaveSsoConfigurationInput = z.infer<typeof SaveSsoConfigurationRequest>;
export type VerifySsoInput = z.infer<typeof VerifySsoRequest>;
export type SsoCallbackInput = z.infer<typeof SsoCallbackQuery>;
export type SsoConfigurationViewBody = z.infer<typeof SsoConfigurationView>;
export type SsoVerificationBody = z.infer<typeof SsoVerification>;
