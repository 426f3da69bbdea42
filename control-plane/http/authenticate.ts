// Resolves the bearer credential (API key, service role key or access token) and the organization it acts
// in. It never rejects by itself: a bad credential is recorded and raised by the route if the route is not
// public, so rate limiting and the error format apply to every answer.
import type { Middleware, ParameterizedContext } from 'koa';
import type { Principal } from '../auth/principal.ts';
import type { AccessTokens } from '../auth/tokens.ts';
import type { ApiKeyService } from '../api-keys/service.ts';
import type { OrganizationService } from '../organizations/service.ts';
import type { ServiceKeyService } from '../service-keys/service.ts';
import type { AppState } from './context.ts';
import { ApiError, BadRequestError, ForbiddenError, UnauthenticatedError } from '../core/errors.ts';
import { ORGANIZATION_ID_PATTERN } from '../../lib/ids.ts';

export interface AuthenticateDeps {
  accessTokens: AccessTokens;
  apiKeys: Pick<ApiKeyService, 'resolve'>;
  organizations: Pick<OrganizationService, 'access'>;
  serviceKeys: Pick<ServiceKeyService, 'recognizes' | 'resolve'>;
}

/** Browsers add these to every request they send on a page's behalf, and scripts can neither set nor remove them. */
const BROWSER_HEADERS = ['Origin', 'Sec-Fetch-Site'];

export function authenticate(deps: AuthenticateDeps): Middleware<AppState> {
  async function resolve(state: AppState, credential: string, requestedOrg: string | undefined): Promise<Principal> {
    if (credential.startsWith('sk_')) {
      const principal = await deps.apiKeys.resolve(state.em, credential);
      // A key belongs to one organization: it cannot switch.
      if (requestedOrg && requestedOrg !== principal.organizationId) throw new ForbiddenError('Insufficient permissions');
      return principal;
    }
    const claims = await deps.accessTokens.verify(credential);
    const organizationId = requestedOrg ?? claims.organizationId;
    const access = await deps.organizations.access(state.em, claims.userId, organizationId);
    if (!access) {
      if (organizationId === claims.organizationId) throw new UnauthenticatedError('Invalid API key');
      throw new ForbiddenError('Insufficient permissions');
    }
    return { kind: 'session', userId: claims.userId, organizationId, plan: access.plan, role: access.role, permissions: access.permissions, scope: 'full_access', platformAdmin: access.platformAdmin };
  }

  // A service role key names the organization it acts on in X-Organization-ID, every time.
  async function resolveServiceKey(ctx: ParameterizedContext<AppState>, credential: string): Promise<Principal> {
    const organizationId = ctx.get('X-Organization-ID');
    if (!organizationId) throw new BadRequestError('A service role key needs the X-Organization-ID header naming the organization to act on', { header: 'X-Organization-ID' });
    const principal = await deps.serviceKeys.resolve(ctx.state.em, credential, organizationId);
    const browser = BROWSER_HEADERS.find((header) => ctx.get(header));
    if (browser) {
      // The key reached a browser: whoever holds it must rotate it.
      ctx.state.log.warn({ serviceKeyId: principal.apiKeyId, header: browser }, 'service role key sent from a browser: refused');
      throw new ForbiddenError(`Service role keys are for server-to-server calls only: refused from a browser (${browser} header)`);
    }
    return principal;
  }

  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    if (header) {
      const match = /^Bearer ([\x21-\x7e]{1,2048})$/i.exec(header);
      // The reference API names the organization in `orgId`; the platform in X-Organization-ID.
      const orgId = typeof ctx.query.orgId === 'string' ? ctx.query.orgId : undefined;
      const requestedOrg = ctx.get('X-Organization-ID') || orgId || undefined;
      try {
        if (!match) throw new UnauthenticatedError('Invalid API key');
        // Both named, and differently: which one was meant is unknowable.
        if (orgId && requestedOrg !== orgId) throw new BadRequestError('orgId names another organization than X-Organization-ID', { parameter: 'orgId' });
        if (deps.serviceKeys.recognizes(match[1]!)) ctx.state.principal = await resolveServiceKey(ctx, match[1]!);
        else {
          // Not an organization id at all: certainly not one the caller belongs to.
          if (requestedOrg !== undefined && !ORGANIZATION_ID_PATTERN.test(requestedOrg)) throw new ForbiddenError('Insufficient permissions');
          ctx.state.principal = await resolve(ctx.state, match[1]!, requestedOrg);
        }
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        ctx.state.authError = error;
      }
    }
    await next();
  };
}
