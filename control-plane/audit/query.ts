// Reading the audit trail: filters (actor, action, resource, time) and keyset pagination, newest first.
// Shared by the per-organization audit (enterprise) and the platform-wide one (admin), which differ only
// in whether the organization is fixed by the caller.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { CursorCodec } from '../http/pagination.ts';

const instant = z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601 timestamp, e.g. 2026-11-21T00:00:00Z.' });

/** Query parameters every audit listing accepts. */
export const auditFilterFields = {
  actor: z.string().max(64).optional().meta({ description: 'User id of whoever acted.' }),
  action: z.string().max(100).optional().meta({ description: 'Operation name, e.g. createDeploymentV1.' }),
  resource_type: z.string().max(64).optional().meta({ example: 'deployment' }),
  resource_id: z.string().max(64).optional(),
  from: instant.optional().meta({ description: 'Records at or after this time.' }),
  to: instant.optional().meta({ description: 'Records before this time.' }),
  limit: z.coerce.number().int().min(1).max(200).default(50).meta({ description: 'Page size, 1 to 200.' }),
  cursor: z.string().max(2048).optional().meta({ description: 'pagination.nextCursor of the previous page.' }),
};

/** Refuses a time window that ends before it starts (a rule, so 422 through the schema's refinement). */
export function validWindow(q: { from?: string | undefined; to?: string | undefined }): boolean {
  return !q.from || !q.to || new Date(q.from) < new Date(q.to);
}

export interface AuditFilter {
  organizationId?: string | undefined;
  actor?: string | undefined;
  action?: string | undefined;
  resource_type?: string | undefined;
  resource_id?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

export interface AuditRecordRow {
  id: string;
  createdAt: string;
  organizationId: string;
  userId: string;
  userEmail: string | null;
  apiKeyId: string | null;
  action: string;
  resourceType: string;
  resourceId: string | null;
  ipAddress: string;
  statusCode: number;
}

const ORDERING = 'audit:-created_at,-id';

export function createAuditQuery(deps: { cursors: CursorCodec }) {
  return {
    /** One page, newest first; `organizationId` unset means every organization. */
    async page(em: EntityManager, filter: AuditFilter) {
      const where: string[] = [];
      const params: unknown[] = [];
      const add = (sql: string, ...values: unknown[]) => { where.push(sql); params.push(...values); };
      if (filter.organizationId) add('a.organization_id = ?', filter.organizationId);
      if (filter.actor) add('a.user_id = ?', filter.actor);
      if (filter.action) add('a.action = ?', filter.action);
      if (filter.resource_type) add('a.resource_type = ?', filter.resource_type);
      if (filter.resource_id) add('a.resource_id = ?', filter.resource_id);
      if (filter.from) add('a.created_at >= ?', new Date(filter.from));
      if (filter.to) add('a.created_at < ?', new Date(filter.to));
      if (filter.cursor) {
        const [createdAt, id] = JSON.parse(deps.cursors.decode(filter.cursor, ORDERING)) as [string, string];
        add('(a.created_at, a.id) < (?, ?)', new Date(createdAt), id);
      }
      const rows = await em.getConnection().execute<RawRow[]>(
        `SELECT a.id, a.created_at, a.organization_id, a.user_id, u.email AS user_email, a.api_key_id, a.action, a.resource_type,
                a.resource_id, a.ip_address, a.status_code
         FROM audit_log a LEFT JOIN "user" u ON u.id = a.user_id
         ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY a.created_at DESC, a.id DESC
         LIMIT ?`,
        [...params, filter.limit + 1],
      );
      const items = rows.slice(0, filter.limit).map(view);
      const last = items.at(-1);
      const hasMore = rows.length > filter.limit && last !== undefined;
      return { items, hasMore, nextCursor: hasMore ? deps.cursors.encode(JSON.stringify([last.createdAt, last.id]), ORDERING) : null };
    },
  };
}

interface RawRow {
  id: string; created_at: Date; organization_id: string; user_id: string; user_email: string | null; api_key_id: string | null;
  action: string; resource_type: string; resource_id: string | null; ip_address: string; status_code: number;
}

function view(r: RawRow): AuditRecordRow {
  return {
    id: r.id, createdAt: new Date(r.created_at).toISOString(), organizationId: r.organization_id, userId: r.user_id, userEmail: r.user_email,
    apiKeyId: r.api_key_id, action: r.action, resourceType: r.resource_type, resourceId: r.resource_id, ipAddress: r.ip_address, statusCode: r.status_code,
  };
}

export type AuditQuery = ReturnType<typeof createAuditQuery>;
