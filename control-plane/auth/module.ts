// Sign-up, sign-in and sessions: access tokens, refresh tokens, and the per-replica credential cache that
// authenticate() reads through.
import { signinFailureLimiter } from '../http/rate-limit.ts';
import { defineModule } from '../module.ts';
import { createCredentialCache, type CredentialCache } from './credential-cache.ts';
import { authRoutes } from './routes.ts';
import { createAuthService, type AuthService } from './service.ts';
import { createAccessTokens, type AccessTokens } from './tokens.ts';

declare module '../module.ts' {
  interface Services { accessTokens: AccessTokens; credentials: CredentialCache; auth: AuthService }
}

export const authModule = defineModule({
  name: 'auth',
  services: ({ config, pool, services }) => {
    const accessTokens = createAccessTokens(config.signingKey);
    return {
      accessTokens,
      credentials: createCredentialCache({ observe: (result) => services.metrics.credentialLookup(result) }),
      auth: createAuthService({ accessTokens, organizations: services.organizations, signinFailures: signinFailureLimiter(pool) }),
    };
  },
  routes: ({ services }) => authRoutes(services.auth),
});
