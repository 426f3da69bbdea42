// Single sign-on: an organization's OpenID Connect identity provider, and the login through it.
import { createSecretBox } from '../../lib/secret-box.ts';
import { defineModule } from '../module.ts';
import { ssoRoutes } from './routes.ts';
import { createSsoService } from './service.ts';

export const ssoModule = defineModule({
  name: 'sso',
  routes: ({ key, config, services }) => ssoRoutes(createSsoService({
    secrets: createSecretBox(key('sso-secrets')),
    auth: services.auth,
    allowPrivateIssuers: config.env !== 'production',
  }), { dashboard: Boolean(config.webDist) }),
});
