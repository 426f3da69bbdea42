// Single sign-on with OpenID Connect (openid-client): an organization's identity-provider configuration
// (one per organization, client secret sealed), a discovery check that reports what is wrong with one, and
// the login: authorization code flow with PKCE (S256), state and nonce kept server-side for one use, ending
// in the same login session as a password sign-in.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import argon2 from 'argon2';
import * as oidc from 'openid-client';
import { assertPublicUrl, PrivateUrlError } from '../../lib/network-guard.ts';
import type { Principal } from '../auth/principal.ts';
import type { LoginSessionBody } from '../auth/schemas.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import type { AuthService } from '../auth/service.ts';
import { sha256 } from '../auth/tokens.ts';
import { UserSchema, type User } from '../auth/user.entity.ts';
import { newId } from '../../lib/ids.ts';
import { BadRequestError, ConflictError, ForbiddenError, InvalidCredentialsError, NotFoundError, ServiceUnavailableError, invalidField } from '../core/errors.ts';
import { ROLE_PERMISSIONS } from '../core/permissions.ts';
import { assertWithinCaller } from '../organizations/grants.ts';
import { MembershipSchema } from '../organizations/membership.entity.ts';
import { SSO_PROVIDERS, type SsoProviderKind } from './providers.ts';
import type {
  CreateSsoConfigurationInput, SSO_DEFAULT_ROLES, SaveSsoConfigurationInput, SsoCallbackInput, SsoConfigurationViewBody, SsoVerificationBody, VerifySsoInput,
} from './schemas.ts';
import { SsoConfigurationSchema, type SsoConfiguration } from './sso-configuration.entity.ts';
import { SsoLoginSchema } from './sso-login.entity.ts';

/** How long a started login may take at the identity provider. */
const LOGIN_SECONDS = 600;
/** Per request to an identity provider (discovery, token, userinfo). */
const IDP_TIMEOUT_SECONDS = 10;
const SCOPE = 'openid email profile';

export interface SsoServiceDeps {
  secrets: SecretBox;
  auth: Pick<AuthService, 'session'>;
  /** Development and tests: issuers on loopback or private addresses are allowed (in production, SSRF). */
  allowPrivateIssuers: boolean;
}

type Check = SsoVerificationBody['checks'][number];

/** Members an identity provider creates get the default role: nobody configures one beyond their own permissions. */
function assertGrantable(principal: Principal, role: (typeof SSO_DEFAULT_ROLES)[number]): void {
  assertWithinCaller(principal, ROLE_PERMISSIONS[role], `the default role ${role}`);
}

export function createSsoService(deps: SsoServiceDeps) {
  const callbackUrl = (origin: string, provider: SsoProviderKind) => `${origin}/v1/auth/sso/callback/${provider}`;

  function view(config: SsoConfiguration, origin: string): SsoConfigurationViewBody {
    return {
      id: config.id,
      organizationId: config.organization.id,
      provider: config.provider,
      issuer: config.issuer,
      clientId: config.clientId,
      allowedDomains: config.allowedDomains,
      defaultRole: config.defaultRole as SsoConfigurationViewBody['defaultRole'],
      jitProvisioning: config.jitProvisioning,
      redirectUri: callbackUrl(origin, config.provider),
      loginUrl: `${origin}/v1/auth/sso/login?orgId=${config.organization.id}`,
      createdAt: config.createdAt.toISOString(),
      updatedAt: config.updatedAt.toISOString(),
    };
  }

  async function find(em: EntityManager, organizationId: string): Promise<SsoConfiguration> {
    const config = await em.findOne(SsoConfigurationSchema, { organization: organizationId });
    if (!config) throw new NotFoundError('SSO is not configured for this organization');
    return config;
  }

  function assign(config: SsoConfiguration, input: SaveSsoConfigurationInput): void {
    config.provider = input.provider;
    config.issuer = input.issuer;
    config.clientId = input.clientId;
    config.allowedDomains = [...new Set(input.allowedDomains)];
    config.defaultRole = input.defaultRole;
    config.jitProvisioning = input.jitProvisioning;
    if (input.clientSecret !== undefined) config.sealedClientSecret = deps.secrets.seal(input.clientSecret);
  }

  async function insert(em: EntityManager, principal: Principal, input: CreateSsoConfigurationInput): Promise<SsoConfiguration> {
    const config = em.create(SsoConfigurationSchema, {
      id: newId('sso'), organization: principal.organizationId, provider: input.provider, issuer: input.issuer, clientId: input.clientId,
      sealedClientSecret: deps.secrets.seal(input.clientSecret), allowedDomains: [...new Set(input.allowedDomains)],
      defaultRole: input.defaultRole, jitProvisioning: input.jitProvisioning,
    });
    // The unique index settles two concurrent creations.
    await em.flush().catch((error: unknown) => {
      if (error instanceof Error && error.name === 'UniqueConstraintViolationException') throw alreadyConfigured();
      throw error;
    });
    return config;
  }

  /** Discovery plus client authentication (client_secret_basic, the OpenID Connect default). */
  async function discover(issuer: string, clientId: string, clientSecret: string | undefined): Promise<oidc.Configuration> {
    if (!deps.allowPrivateIssuers) await assertPublicUrl(issuer);
    return oidc.discovery(new URL(issuer), clientId, undefined, clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(clientSecret), {
      timeout: IDP_TIMEOUT_SECONDS,
    });
  }

  function storedSecret(config: SsoConfiguration): string {
    try {
      return deps.secrets.open(config.sealedClientSecret);
    } catch {
      throw new ServiceUnavailableError('The stored client secret cannot be decrypted (was KILN_SIGNING_KEY changed?): save the configuration again with its client secret');
    }
  }

  async function discoverConfigured(config: SsoConfiguration): Promise<oidc.Configuration> {
    const clientSecret = storedSecret(config);
    try {
      return await discover(config.issuer, config.clientId, clientSecret);
    } catch (error) {
      throw new ServiceUnavailableError(`The identity provider cannot be used: ${describe(error)}`);
    }
  }

  async function verify(input: { issuer: string; clientId?: string; clientSecret?: string; provider: SsoProviderKind }, origin: string): Promise<SsoVerificationBody> {
    const checks: Check[] = [];
    const finish = (): SsoVerificationBody => {
      for (const name of ['reachable', 'openid_configuration', 'authorization_code', 'pkce_s256', 'client_credentials'] as const) {
        if (!checks.some((c) => c.name === name)) checks.push({ name, status: 'skipped', message: 'Not checked: an earlier check failed' });
      }
      return { issuer: input.issuer, ok: !checks.some((c) => c.status === 'failed'), checks };
    };

    let client: oidc.Configuration;
    try {
      client = await discover(input.issuer, input.clientId ?? 'kiln', input.clientSecret);
    } catch (error) {
      if (isNetworkError(error)) {
        checks.push({ name: 'reachable', status: 'failed', message: `${input.issuer} cannot be reached: ${describe(error)}` });
      } else {
        checks.push({ name: 'reachable', status: 'passed', message: `${input.issuer} answers` });
        checks.push({ name: 'openid_configuration', status: 'failed', message: `Not an OpenID Connect issuer: ${describe(error)}` });
      }
      return finish();
    }
    const metadata = client.serverMetadata();
    checks.push({ name: 'reachable', status: 'passed', message: `${input.issuer} answers` });
    checks.push({ name: 'openid_configuration', status: 'passed', message: 'The discovery document is valid and names this issuer' });

    const codeFlow = (metadata.response_types_supported ?? []).includes('code')
      && (metadata.grant_types_supported ?? ['authorization_code']).includes('authorization_code')
      && Boolean(metadata.authorization_endpoint && metadata.token_endpoint);
    checks.push(codeFlow
      ? { name: 'authorization_code', status: 'passed', message: 'The authorization code flow is supported' }
      : { name: 'authorization_code', status: 'failed', message: 'The issuer does not offer the authorization code flow (response type `code`, authorization and token endpoints)' });

    const methods = metadata.code_challenge_methods_supported;
    checks.push(methods === undefined
      ? { name: 'pkce_s256', status: 'warning', message: 'The issuer does not advertise PKCE methods; Kiln sends S256 anyway' }
      : methods.includes('S256')
        ? { name: 'pkce_s256', status: 'passed', message: 'PKCE with S256 is supported' }
        : { name: 'pkce_s256', status: 'failed', message: `PKCE S256 is not supported (only: ${methods.join(', ') || 'none'})` });

    if (!codeFlow) return finish();
    if (input.clientId === undefined || input.clientSecret === undefined) {
      checks.push({ name: 'client_credentials', status: 'skipped', message: 'No client id and secret given' });
    } else {
      checks.push(await probeClient(client, callbackUrl(origin, input.provider)));
    }
    return finish();
  }

  return {
    providers: () => SSO_PROVIDERS,

    get: async (em: EntityManager, principal: Principal, origin: string) => view(await find(em, principal.organizationId), origin),

    async create(em: EntityManager, principal: Principal, input: CreateSsoConfigurationInput, origin: string) {
      assertGrantable(principal, input.defaultRole);
      if (await em.count(SsoConfigurationSchema, { organization: principal.organizationId })) throw alreadyConfigured();
      return view(await insert(em, principal, input), origin);
    },

    /** Replaces the configuration; an absent client secret keeps the stored one. */
    async replace(em: EntityManager, principal: Principal, input: SaveSsoConfigurationInput, origin: string) {
      assertGrantable(principal, input.defaultRole);
      const config = await find(em, principal.organizationId);
      assign(config, input);
      await em.flush();
      return view(config, origin);
    },

    /** Creates or replaces: the enterprise settings page has one form for both. */
    async save(em: EntityManager, principal: Principal, input: SaveSsoConfigurationInput, origin: string) {
      assertGrantable(principal, input.defaultRole);
      const config = await em.findOne(SsoConfigurationSchema, { organization: principal.organizationId });
      if (config) {
        assign(config, input);
        await em.flush();
        return view(config, origin);
      }
      if (input.clientSecret === undefined) {
        const message = 'clientSecret is required when SSO is not configured yet';
        throw invalidField('clientSecret', message);
      }
      return view(await insert(em, principal, { ...input, clientSecret: input.clientSecret }), origin);
    },

    async remove(em: EntityManager, principal: Principal) {
      const config = await find(em, principal.organizationId);
      await em.nativeDelete(SsoConfigurationSchema, { id: config.id });
      return { id: config.id, deleted: true as const };
    },

    async verifyConfigured(em: EntityManager, principal: Principal, origin: string) {
      const config = await find(em, principal.organizationId);
      return verify({ issuer: config.issuer, clientId: config.clientId, clientSecret: storedSecret(config), provider: config.provider }, origin);
    },

    verifyProposed: (input: VerifySsoInput, origin: string) => verify({ ...input, provider: input.provider ?? 'oidc' }, origin),

    /** Starts a login: the URL of the identity provider's authorization endpoint to send the browser to. */
    async startLogin(em: EntityManager, organizationId: string, origin: string): Promise<string> {
      const config = await find(em, organizationId);
      const client = await discoverConfigured(config);
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const redirectUri = callbackUrl(origin, config.provider);
      em.create(SsoLoginSchema, {
        id: newId('ssl'), organization: organizationId, provider: config.provider, stateHash: sha256(state), nonce,
        sealedCodeVerifier: deps.secrets.seal(codeVerifier), redirectUri, expiresAt: new Date(Date.now() + LOGIN_SECONDS * 1000),
      });
      await em.flush();
      // Abandoned logins are cleared here rather than by a separate job.
      await em.nativeDelete(SsoLoginSchema, { expiresAt: { $lt: new Date(Date.now() - LOGIN_SECONDS * 1000) } });
      return oidc.buildAuthorizationUrl(client, {
        redirect_uri: redirectUri, scope: SCOPE, state, nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256',
      }).href;
    },

    /** Completes a login at the redirect URI; answers with a Kiln login session. */
    async completeLogin(em: EntityManager, provider: SsoProviderKind, query: SsoCallbackInput): Promise<LoginSessionBody> {
      const login = await em.findOne(SsoLoginSchema, { stateHash: sha256(query.state) });
      const invalidState = new BadRequestError('Unknown, expired or already used SSO login state: start the login again', { fields: [{ field: 'state', message: 'unknown, expired or already used' }] });
      if (!login || login.provider !== provider || login.expiresAt.getTime() <= Date.now()) throw invalidState;
      const organizationId = login.organization.id;
      if (query.orgId !== undefined && query.orgId !== organizationId) throw invalidState;
      // Conditional update: a replayed callback finds the login used, whatever the timing.
      if (await em.nativeUpdate(SsoLoginSchema, { id: login.id, usedAt: null }, { usedAt: new Date() }) === 0) throw invalidState;
      const config = await find(em, organizationId);
      const client = await discoverConfigured(config);

      const response = new URL(login.redirectUri);
      for (const name of ['code', 'state', 'iss', 'error', 'error_description'] as const) {
        if (query[name] !== undefined) response.searchParams.set(name, query[name]);
      }
      let email: unknown;
      let emailVerified: unknown;
      let name: unknown;
      try {
        const tokens = await oidc.authorizationCodeGrant(client, response, {
          pkceCodeVerifier: deps.secrets.open(login.sealedCodeVerifier), expectedState: query.state, expectedNonce: login.nonce, idTokenExpected: true,
        });
        const claims = tokens.claims()!;
        ({ email, email_verified: emailVerified, name } = claims);
        // Providers that follow OpenID Connect to the letter put scope claims in userinfo only.
        if (typeof email !== 'string') ({ email, email_verified: emailVerified, name } = await oidc.fetchUserInfo(client, tokens.access_token, claims.sub));
      } catch (error) {
        throw new InvalidCredentialsError(`The identity provider did not confirm the login: ${describe(error)}`);
      }
      if (typeof email !== 'string' || !email.includes('@') || email.length > 254) throw new InvalidCredentialsError('The identity provider sent no usable e-mail address (grant the email scope)');
      if (emailVerified === false) throw new ForbiddenError('The identity provider says this e-mail address is not verified');
      const address = email.toLowerCase();
      const domain = address.slice(address.lastIndexOf('@') + 1);
      if (!config.allowedDomains.includes(domain)) throw new ForbiddenError(`E-mail domain ${domain} may not sign in to this organization with SSO`);

      const user = await em.findOne(UserSchema, { email: address });
      if (user) {
        // An existing account joins an organization by invitation only: otherwise whoever runs this
        // organization's identity provider could take over any account of a listed domain.
        if (!await em.count(MembershipSchema, { user: user.id, organization: organizationId })) {
          throw new ForbiddenError(`${address} has a Kiln account that is not a member of this organization: ask an administrator for an invitation`);
        }
        return deps.auth.session(em, user, organizationId);
      }
      if (!config.jitProvisioning) throw new ForbiddenError(`No Kiln account for ${address} in this organization: ask an administrator for an invitation`);
      return deps.auth.session(em, await provision(em, address, typeof name === 'string' && name.trim() ? name.trim().slice(0, 200) : address, config), organizationId);
    },
  };
}

/** Just-in-time provisioning: the user (without a usable password) and the membership with the default role. */
async function provision(em: EntityManager, email: string, name: string, config: SsoConfiguration): Promise<User> {
  // A hash of random bytes nobody knows: an SSO user signs in through SSO until they set a password.
  const passwordHash = await argon2.hash(randomBytes(32), { type: argon2.argon2id });
  const user = em.create(UserSchema, { id: newId('usr'), email, name, passwordHash, ssoProvisioned: true });
  em.create(MembershipSchema, { id: newId('mem'), organization: config.organization.id, user: user.id, role: config.defaultRole });
  await em.flush().catch((error: unknown) => {
    if (error instanceof Error && error.name === 'UniqueConstraintViolationException') throw new ConflictError('This account is being created by another login; try again');
    throw error;
  });
  return user;
}

/** Client authentication checked without a user: a made-up code is refused as `invalid_grant` only after the client authenticated. */
async function probeClient(client: oidc.Configuration, redirectUri: string): Promise<Check> {
  try {
    await oidc.genericGrantRequest(client, 'authorization_code', { code: `kiln-verify-${randomBytes(8).toString('hex')}`, redirect_uri: redirectUri });
    return { name: 'client_credentials', status: 'warning', message: 'The token endpoint accepted a made-up code' };
  } catch (error) {
    if (error instanceof oidc.ResponseBodyError && error.error === 'invalid_grant') {
      return { name: 'client_credentials', status: 'passed', message: 'The client id and secret are accepted' };
    }
    if ((error instanceof oidc.ResponseBodyError && error.error === 'invalid_client') || (error instanceof oidc.WWWAuthenticateChallengeError && error.status === 401)) {
      return { name: 'client_credentials', status: 'failed', message: 'The identity provider refused the client id and secret (invalid_client)' };
    }
    return { name: 'client_credentials', status: 'warning', message: `Could not tell whether the client credentials are accepted: ${describe(error)}` };
  }
}

function isNetworkError(error: unknown): boolean {
  if (error instanceof PrivateUrlError) return true;
  if (error instanceof DOMException) return error.name === 'TimeoutError' || error.name === 'AbortError';
  // fetch reports connection and TLS failures as a TypeError with the cause attached; the SSRF guard's
  // DNS look-up fails with a system error code.
  return (error instanceof TypeError && error.cause !== undefined) || (error instanceof Error && 'syscall' in error);
}

/** A short reason for a failed exchange with an identity provider, without secrets. */
function describe(error: unknown): string {
  if (error instanceof oidc.ResponseBodyError || error instanceof oidc.AuthorizationResponseError) {
    return error.error_description ? `${error.error} (${error.error_description})` : error.error;
  }
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ((error.cause as NodeJS.ErrnoException).code ?? error.cause.message) : undefined;
    return cause ? `${error.message}: ${cause}` : error.message;
  }
  return String(error);
}

function alreadyConfigured(): ConflictError {
  return new ConflictError('SSO is already configured for this organization: use PUT to change it');
}

export type SsoService = ReturnType<typeof createSsoService>;
