// Liveness and database health, for load balancers and monitors.
import { defineModule } from '../module.ts';
import { healthRoutes } from './routes.ts';

export const healthModule = defineModule({
  name: 'health',
  routes: ({ orm }) => healthRoutes(orm),
});
