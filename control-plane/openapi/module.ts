// The OpenAPI document of every route the app serves, built from the routes' own declarations.
import { defineModule } from '../module.ts';
import { openApiRoutes } from './routes.ts';

export const openApiModule = defineModule({
  name: 'openapi',
  routes: ({ routes }) => openApiRoutes(routes),
});
