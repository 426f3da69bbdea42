// Kiln's own metrics in the API process: built before the areas that count into them (auth's credential
// cache), read by the request middleware (http/metrics.ts) and served by GET /metrics/internal.
import { defineModule } from '../module.ts';
import { createApiMetrics, type ApiMetrics } from './metrics.ts';
import { observabilityRoutes } from './routes.ts';

declare module '../module.ts' {
  interface Services { metrics: ApiMetrics }
}

export const observabilityModule = defineModule({
  name: 'observability',
  services: () => ({ metrics: createApiMetrics() }),
  routes: ({ services }) => observabilityRoutes(services.metrics),
});
