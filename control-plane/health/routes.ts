// Health on both surfaces, answered at once from the background probes (dependencies.ts), never by waiting on
// a dependency that hangs: the spec's health routes and readiness say 503 while the database is unavailable,
// readiness naming each dependency's state (Temporal's is reported; the API serves without it, saving changes
// for later delivery); liveness says only that the process answers. The inference gateway serves its liveness
// and readiness only, and is ready while the database is away: it serves running deployments from its caches.
import { z } from 'zod';
import { ServiceUnavailableError } from '../core/errors.ts';
import { defineRoute, type Route } from '../http/routes.ts';
import type { DependencyMonitor } from './dependencies.ts';

/** Each surface's health routes, by their path's start. */
const SURFACES = [{ prefix: '/v1', suffix: 'V1' }, { prefix: '/api', suffix: '' }] as const;
const PATHS = { health: '/health', ready: '/health/ready', live: '/health/live' } as const;

/** The health routes' paths: answered whatever the database's state (http/dependency-guard.ts lets them through). */
export const HEALTH_PATHS: ReadonlySet<string> = new Set(SURFACES.flatMap(({ prefix }) => Object.values(PATHS).map((path) => prefix + path)));

/** Health probes and scrapes of Kiln's metrics: asked every few seconds, answered without the database, logged at debug. */
export const isProbe = (path: string) => HEALTH_PATHS.has(path) || path === '/metrics/internal' || path === '/v1/metrics/internal';

const Health = z.object({ status: z.literal('ok'), checks: z.object({ database: z.literal('ok') }) }).meta({ id: 'Health' });
const DependencyStateView = z.object({
  status: z.enum(['ok', 'unavailable']),
  since: z.string().meta({ description: 'When it entered this status (ISO 8601).' }),
  reason: z.string().optional().meta({ description: 'Why it is unavailable.' }),
}).meta({ id: 'DependencyState' });
const Readiness = z.object({
  status: z.literal('ready'),
  checks: z.object({ database: DependencyStateView, temporal: DependencyStateView }),
}).meta({ id: 'Readiness' });
const Liveness = z.object({ status: z.literal('alive') }).meta({ id: 'Liveness' });

/** Which process serves them: the API (all three, ready with the database) or the inference gateway. */
export type HealthOf = 'api' | 'gateway';

export function healthRoutes(dependencies: DependencyMonitor, of: HealthOf = 'api'): Route[] {
  const common = { permission: 'public', method: 'GET', tag: 'Health', resourceType: 'health' } as const;
  const health = (path: string, operationId: string) => defineRoute({
    ...common, path, operationId, summary: 'Service and database health', response: Health, errors: [503],
    async handle() {
      if (!dependencies.databaseAvailable()) throw new ServiceUnavailableError('Database unavailable', { checks: { database: 'unavailable' } }, { 'Retry-After': '5' });
      return { data: { status: 'ok' as const, checks: { database: 'ok' as const } } };
    },
  });
  const ready = (path: string, operationId: string) => defineRoute({
    ...common, path, operationId, response: Readiness, errors: [503],
    summary: of === 'api'
      ? 'Readiness: 200 while the database answers, 503 otherwise; each dependency\'s state as last probed'
      : 'Readiness of the inference gateway: 200 while it runs (it serves from its caches while the database is away); each dependency\'s state as last probed',
    async handle() {
      const checks = dependencies.state();
      if (of === 'api' && checks.database.status !== 'ok') throw new ServiceUnavailableError('Not ready: the database is unavailable', { checks }, { 'Retry-After': '5' });
      return { data: { status: 'ready' as const, checks } };
    },
  });
  const live = (path: string, operationId: string) => defineRoute({
    ...common, path, operationId, response: Liveness, summary: 'Liveness: 200 whenever the process answers',
    handle: async () => ({ data: { status: 'alive' as const } }),
  });
  return SURFACES.flatMap(({ prefix, suffix }) => [
    ...(of === 'api' ? [health(prefix + PATHS.health, `health${suffix}`)] : []),
    ready(prefix + PATHS.ready, `readiness${suffix}`), live(prefix + PATHS.live, `liveness${suffix}`),
  ]);
}
