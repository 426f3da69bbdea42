// Providers: what a model or a GPU requirement costs on other providers' GPU offers (catalog/provider-prices.ts) and on Kiln's.
import { defineModule } from '../module.ts';
import { providerRoutes } from './routes.ts';
import { createProviderService } from './service.ts';

export const providersModule = defineModule({
  name: 'providers',
  routes: ({ services }) => providerRoutes(createProviderService({ prometheus: services.prometheus, models: services.models })),
});
