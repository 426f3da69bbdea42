// Service role keys: platform credentials for server-to-server calls; managed by platform administrators,
// resolved by authenticate() for requests that carry one.
import { defineModule } from '../module.ts';
import { serviceKeyRoutes } from './routes.ts';
import { createServiceKeyService, type ServiceKeyService } from './service.ts';

declare module '../module.ts' {
  interface Services { serviceKeys: ServiceKeyService }
}

export const serviceKeysModule = defineModule({
  name: 'service-keys',
  services: ({ config }) => ({ serviceKeys: createServiceKeyService({ env: config.env }) }),
  routes: ({ services }) => serviceKeyRoutes(services.serviceKeys),
});
