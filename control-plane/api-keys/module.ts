// API keys: created, listed, rotated and revoked by their organization; resolved on every keyed request.
import { defineModule } from '../module.ts';
import { apiKeyRoutes } from './routes.ts';
import { createApiKeyService, type ApiKeyService } from './service.ts';

declare module '../module.ts' {
  interface Services { apiKeys: ApiKeyService }
}

export const apiKeysModule = defineModule({
  name: 'api-keys',
  services: ({ config, services }) => ({
    apiKeys: createApiKeyService({ env: config.env, organizations: services.organizations, credentials: services.credentials }),
  }),
  routes: ({ services }) => apiKeyRoutes(services.apiKeys),
});
