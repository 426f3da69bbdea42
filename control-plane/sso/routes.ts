// SSO: the organization's identity-provider configuration under /v1/auth/sso (create, read, replace,
// delete) and /v1/enterprise/sso/configure (read, create-or-replace), both on the one configuration;
// discovery checks and provider presets; the login itself: GET /v1/auth/sso/login?orgId= sends the browser
// to the identity provider, which sends it back to GET /v1/auth/sso/callback/{provider} for a session.
import { z } from 'zod';
import { LoginSession } from '../auth/schemas.ts';
import { defineRoute, type Route } from '../http/routes.ts';
import {
  CreateSsoConfigurationRequest, DeletedSsoConfiguration, OptionalOrgQuery, OrgQuery, SaveSsoConfigurationRequest, SsoCallbackParams, SsoCallbackQuery,
  SsoConfigurationView, SsoLoginQuery, SsoProviderView, SsoVerification, VerifySsoRequest,
} from './schemas.ts';
import type { SsoService } from './service.ts';

const configuration = { tag: 'SSO', resourceType: 'sso_configuration' } as const;
const login = { tag: 'SSO', resourceType: 'session' } as const;

/**
 * Where a browser that finished an SSO login goes when the API serves the dashboard: its SSO page, the session
 * in the URL's fragment (which browsers never send to a server; the page takes it out of the history).
 */
export const DASHBOARD_SSO_PAGE = '/sign-in/sso';

export function ssoRoutes(sso: SsoService, options: { dashboard?: boolean } = {}): Route[] {
  const read = (path: string, operationId: string) => defineRoute({
    ...configuration, permission: 'sso:read', method: 'GET', path, operationId, summary: "The organization's SSO configuration (never its client secret)",
    query: OrgQuery, response: SsoConfigurationView, errors: [404],
    handle: async ({ state, origin }) => ({ data: await sso.get(state.em, state.principal!, origin) }),
  });
  return [
    read('/v1/auth/sso', 'getSsoConfiguration'),
    defineRoute({
      ...configuration, permission: 'sso:write', method: 'POST', path: '/v1/auth/sso', operationId: 'createSsoConfiguration',
      summary: 'Configure an OpenID Connect identity provider for the organization (the client secret is stored encrypted)',
      body: CreateSsoConfigurationRequest, response: SsoConfigurationView, successStatus: 201, idempotent: true, errors: [409, 422],
      handle: async ({ body, state, origin }) => ({ data: await sso.create(state.em, state.principal!, body, origin) }),
    }),
    defineRoute({
      ...configuration, permission: 'sso:write', method: 'PUT', path: '/v1/auth/sso', operationId: 'replaceSsoConfiguration',
      summary: 'Replace the SSO configuration; an absent client secret keeps the stored one',
      body: SaveSsoConfigurationRequest, response: SsoConfigurationView, errors: [404, 422],
      handle: async ({ body, state, origin }) => ({ data: await sso.replace(state.em, state.principal!, body, origin) }),
    }),
    defineRoute({
      ...configuration, permission: 'sso:write', method: 'DELETE', path: '/v1/auth/sso', operationId: 'deleteSsoConfiguration', summary: 'Remove the SSO configuration',
      query: OptionalOrgQuery, response: DeletedSsoConfiguration, errors: [404],
      handle: async ({ state }) => ({ data: await sso.remove(state.em, state.principal!) }),
    }),
    read('/v1/enterprise/sso/configure', 'getEnterpriseSsoConfiguration'),
    defineRoute({
      ...configuration, permission: 'sso:write', method: 'POST', path: '/v1/enterprise/sso/configure', operationId: 'saveEnterpriseSsoConfiguration',
      summary: 'Create or replace the SSO configuration; the client secret is required the first time',
      body: SaveSsoConfigurationRequest, response: SsoConfigurationView, errors: [422],
      handle: async ({ body, state, origin }) => ({ data: await sso.save(state.em, state.principal!, body, origin) }),
    }),
    defineRoute({
      ...configuration, permission: 'sso:read', method: 'GET', path: '/v1/enterprise/sso/verify', operationId: 'verifySsoConfiguration',
      summary: 'Run OpenID Connect discovery against the configured issuer and report what is wrong',
      query: OrgQuery, response: SsoVerification, errors: [404, 503],
      handle: async ({ state, origin }) => ({ data: await sso.verifyConfigured(state.em, state.principal!, origin) }),
    }),
    // Checking a proposed issuer makes outbound requests on the caller's behalf: for those who may configure SSO.
    defineRoute({
      ...configuration, permission: 'sso:write', method: 'POST', path: '/v1/enterprise/sso/verify', operationId: 'verifyProposedSsoConfiguration',
      summary: 'Run OpenID Connect discovery against a proposed issuer (and client) and report what is wrong',
      body: VerifySsoRequest, response: SsoVerification, errors: [422],
      handle: async ({ body, origin }) => ({ data: await sso.verifyProposed(body, origin) }),
    }),
    defineRoute({
      ...configuration, permission: 'sso:read', method: 'GET', path: '/v1/enterprise/sso/providers', operationId: 'listSsoProviders',
      summary: 'Supported identity-provider kinds, with their issuer templates',
      query: OrgQuery, response: z.array(SsoProviderView),
      handle: async () => ({ data: sso.providers() }),
    }),
    // The SSO login (start and the identity provider's redirect back) is how a caller without a credential gets one.
    defineRoute({
      ...login, permission: 'public', method: 'GET', path: '/v1/auth/sso/login', operationId: 'startSsoLogin',
      summary: "Start an SSO login: redirects (302) to the organization's identity provider (PKCE S256, state and nonce kept server-side)",
      query: SsoLoginQuery, response: z.null(), successStatus: 302, errors: [404, 503],
      handle: async ({ query, state, origin }) => ({ data: null, redirect: await sso.startLogin(state.em, query.orgId, origin) }),
    }),
    defineRoute({
      ...login, permission: 'public', method: 'GET', path: '/v1/auth/sso/callback/{provider}', operationId: 'completeSsoLogin',
      summary: "The identity provider's redirect: completes the authorization code flow and answers with a login session",
      params: SsoCallbackParams, query: SsoCallbackQuery, response: LoginSession, errors: [403, 404, 409, 503],
      async handle({ params, query, state, header }) {
        const session = await sso.completeLogin(state.em, params.provider, query);
        // A person's browser, sent back by the identity provider, is taken on to the dashboard signed in;
        // programs (and any client that is not navigating) get the session as JSON.
        if (options.dashboard && header('sec-fetch-mode') === 'navigate') {
          const fragment = new URLSearchParams({
            access_token: session.access_token, refresh_token: session.refresh_token, expires_in: String(session.expires_in),
            user_id: session.user.id, email: session.user.email, organization_id: session.user.organization_id,
          });
          return { data: session, redirect: `${DASHBOARD_SSO_PAGE}#${fragment}` };
        }
        return { data: session };
      },
    }),
  ];
}
