// An organization's usage over a period, from its audit trail (requests and mutations by member, by API key
// and by deployment) and from its deployments (created and active, by GPU type).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import type { AnalyticsBody, AnalyticsInput } from './schemas.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface AnalyticsDeps {
  /** Audit actions (operationIds) of the routes that change something. */
  mutatingActions: () => readonly string[];
}

// Audited requests in the period; `?`s: organization, from, to. Requests that matched no route are
// recorded as `METHOD /path`.
const PERIOD = 'a.organization_id = ? AND a.created_at >= ?::timestamptz AND a.created_at < ?::timestamptz';
const USAGE = `count(*)::int AS requests,
  count(*) FILTER (WHERE a.action IN (?) OR a.action ~ '^(POST|PUT|PATCH|DELETE) ')::int AS mutations`;

export function createAnalyticsService(deps: AnalyticsDeps) {
  return {
    async usage(em: EntityManager, principal: Principal, query: AnalyticsInput): Promise<AnalyticsBody> {
      const to = query.to ? new Date(query.to) : new Date();
      const from = query.from ? new Date(query.from) : new Date(to.getTime() - 30 * DAY_MS);
      const connection = em.getConnection();
      const usage = [deps.mutatingActions(), principal.organizationId, from.toISOString(), to.toISOString()];
      const [[totals], byMember, byApiKey, byDeployment, byGpuType] = await Promise.all([
        connection.execute<Array<AnalyticsBody['totals']>>(`SELECT ${USAGE} FROM audit_log a WHERE ${PERIOD}`, usage),
        connection.execute<AnalyticsBody['byMember']>(`
          SELECT a.user_id AS "userId", u.email, u.name, ${USAGE}
          FROM audit_log a LEFT JOIN "user" u ON u.id = a.user_id
          WHERE ${PERIOD}
          GROUP BY a.user_id, u.email, u.name ORDER BY requests DESC, a.user_id LIMIT ?`, [...usage, query.limit]),
        connection.execute<AnalyticsBody['byApiKey']>(`
          SELECT a.api_key_id AS "apiKeyId", k.name, k.prefix, ${USAGE}
          FROM audit_log a LEFT JOIN api_key k ON k.id = a.api_key_id AND k.organization_id = a.organization_id
          WHERE ${PERIOD} AND a.api_key_id IS NOT NULL
          GROUP BY a.api_key_id, k.name, k.prefix ORDER BY requests DESC, a.api_key_id LIMIT ?`, [...usage, query.limit]),
        // Only the organization's own deployments (deleted ones included): a record naming an id that
        // never existed, such as a mistyped GET, is not a deployment's usage.
        connection.execute<AnalyticsBody['byDeployment']>(`
          SELECT d.id AS "deploymentId", d.name, d.gpu, ${USAGE}
          FROM audit_log a JOIN deployment d ON d.id = a.resource_id AND d.organization_id = a.organization_id
          WHERE ${PERIOD} AND a.resource_type = 'deployment'
          GROUP BY d.id, d.name, d.gpu ORDER BY requests DESC, d.id LIMIT ?`, [...usage, query.limit]),
        connection.execute<AnalyticsBody['deployments']['byGpuType']>(`
          SELECT gpu, count(*) FILTER (WHERE created_at >= ?::timestamptz)::int AS created, count(*)::int AS active
          FROM deployment
          WHERE organization_id = ? AND created_at < ?::timestamptz AND (deleted_at IS NULL OR deleted_at >= ?::timestamptz)
          GROUP BY gpu ORDER BY gpu`, [from.toISOString(), principal.organizationId, to.toISOString(), from.toISOString()]),
      ]);
      return {
        period: { from: from.toISOString(), to: to.toISOString() },
        totals: totals!,
        byMember,
        byApiKey,
        byDeployment,
        deployments: { byGpuType },
      };
    },
  };
}

export type AnalyticsService = ReturnType<typeof createAnalyticsService>;
