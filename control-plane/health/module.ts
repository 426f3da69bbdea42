// Health, for load balancers and monitors: liveness (the process answers), readiness (each dependency as the
// background probes last found it) and the spec's health routes. The module runs those probes, which the
// dependency guard (http/dependency-guard.ts) reads to answer 503 at once while the database is away.
import { defineModule } from '../module.ts';
import { createDependencyMonitor, type DependencyMonitor } from './dependencies.ts';
import { healthRoutes } from './routes.ts';

declare module '../module.ts' {
  interface Services {
    /** PostgreSQL and Temporal, probed in the background. */
    dependencies: DependencyMonitor;
  }
}

export const healthModule = defineModule({
  name: 'health',
  services: ({ pool, temporal }) => ({ dependencies: createDependencyMonitor({ database: pool.options, temporal }) }),
  routes: ({ services }) => healthRoutes(services.dependencies),
  start: ({ services }) => services.dependencies.start(),
  close: ({ dependencies }) => dependencies.stop(),
});
