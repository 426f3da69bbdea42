// Health on both surfaces: 200 when the database answers, 503 when it does not.
import { z } from 'zod';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ServiceUnavailableError } from '../core/errors.ts';
import { defineRoute, type Route } from '../http/routes.ts';

const CHECK_TIMEOUT_MS = 2_000;

const Health = z.object({ status: z.literal('ok'), checks: z.object({ database: z.literal('ok') }) }).meta({ id: 'Health' });

export function healthRoutes(orm: MikroORM): Route[] {
  const health = (path: string, operationId: string) => defineRoute({
    permission: 'public', method: 'GET', path, operationId, summary: 'Service and database health', tag: 'Health', resourceType: 'health',
    response: Health, errors: [503],
    async handle() {
      // A database that hangs is as unhealthy as one that refuses: answer within the probe's patience.
      const up = await Promise.race([
        orm.em.getConnection().execute('select 1').then(() => true, () => false),
        new Promise<false>((resolve) => setTimeout(resolve, CHECK_TIMEOUT_MS, false).unref()),
      ]);
      if (!up) throw new ServiceUnavailableError('Database unavailable', { checks: { database: 'unavailable' } });
      return { data: { status: 'ok' as const, checks: { database: 'ok' as const } } };
    },
  });
  return [health('/v1/health', 'healthV1'), health('/api/health', 'health')];
}
