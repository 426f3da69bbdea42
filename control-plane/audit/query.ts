// Reads an organization's audit trail: filtered pages for the list (signed keyset cursors), and the same
// filters walked in keyset batches for the export, so neither holds more than a batch in memory nor a
// database connection between batches (a slow download cannot tie up the pool). The platform-wide
// listing (platform administration) is the same query with the organization as an optional filter.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import type { CursorCodec } from '../core/pagination.ts';
import type { StreamReply } from '../http/routes.ts';
import { AuditLogSchema, type AuditLog } from './audit-log.entity.ts';
import { exportStream } from './export.ts';
import {
  AUDIT_EXPORT_MEDIA_TYPES, type AuditFilters, type AuditRecordBody, type ExportAuditInput, type ListAuditInput,
  type ListPlatformAuditInput, type PlatformAuditRecordBody,
} from './schemas.ts';

const EXPORT_BATCH = 1_000;

const COLUMNS = ['id', 'createdAt', 'organizationId', 'userId', 'apiKeyId', 'action', 'resourceType', 'resourceId', 'ipAddress', 'statusCode'] as const;
type Row = { [K in (typeof COLUMNS)[number]]-?: Exclude<AuditLog[K], undefined> };
/** A row's place in the ordering: its creation time (ISO 8601) and id. */
type Position = readonly [createdAt: string, id: string];

export interface AuditQueryDeps {
  cursors: CursorCodec;
}

export function createAuditQueryService(deps: AuditQueryDeps) {
  /** Up to `limit` rows matching the filters, strictly after `after` in the filters' ordering; no organization: all of them. */
  async function read(em: EntityManager, organizationId: string | undefined, filters: AuditFilters, limit: number, after?: Position): Promise<Row[]> {
    const direction = filters.sort[0]![1];
    const beyond = direction === 'asc' ? '$gt' : '$lt';
    const period = {
      ...(filters.from ? { $gte: new Date(filters.from) } : {}),
      ...(filters.to ? { $lt: new Date(filters.to) } : {}),
    };
    const conditions = [
      ...(Object.keys(period).length ? [{ createdAt: period }] : []),
      // The bound on createdAt alone lets PostgreSQL start its index scan at the position.
      ...(after ? [{ createdAt: { [direction === 'asc' ? '$gte' : '$lte']: new Date(after[0]) } }, {
        $or: [
          { createdAt: { [beyond]: new Date(after[0]) } },
          { createdAt: new Date(after[0]), id: { [beyond]: after[1] } },
        ],
      }] : []),
    ];
    return em.createQueryBuilder(AuditLogSchema)
      .select([...COLUMNS])
      .where({
        ...(organizationId ? { organizationId } : {}),
        ...(filters.userId ? { userId: filters.userId } : {}),
        ...(filters.apiKeyId ? { apiKeyId: filters.apiKeyId } : {}),
        ...(filters.action ? { action: filters.action } : {}),
        ...(filters.resourceType ? { resourceType: filters.resourceType } : {}),
        ...(filters.resourceId ? { resourceId: filters.resourceId } : {}),
        ...(conditions.length ? { $and: conditions } : {}),
      })
      .orderBy([{ createdAt: direction }, { id: direction }])
      .limit(limit)
      .execute<Row[]>('all');
  }

  async function page(em: EntityManager, organizationId: string | undefined, query: ListAuditInput | ListPlatformAuditInput) {
    const ordering = orderingOf(query);
    const after = query.cursor ? (JSON.parse(deps.cursors.decode(query.cursor, ordering)) as Position) : undefined;
    const rows = await read(em, organizationId, query, query.limit + 1, after);
    return deps.cursors.page(rows, query.limit, ordering, positionOf);
  }

  return {
    async list(em: EntityManager, principal: Principal, query: ListAuditInput) {
      const result = await page(em, principal.organizationId, query);
      return { ...result, items: result.items.map(view) };
    },

    /** Every organization's trail, or one organization's (`organizationId`), for platform administrators. */
    async listPlatform(em: EntityManager, query: ListPlatformAuditInput) {
      const result = await page(em, query.organizationId, query);
      return { ...result, items: result.items.map((row): PlatformAuditRecordBody => ({ ...view(row), organization_id: row.organizationId })) };
    },

    /** The whole filtered trail as CSV or JSON Lines, read and sent one batch at a time. */
    async export(em: EntityManager, principal: Principal, query: ExportAuditInput): Promise<StreamReply> {
      // A fixed end: records written while the export runs are not chased.
      const startedAt = new Date();
      const filters = { ...query, to: query.to ?? startedAt.toISOString() };
      // Read before answering: a failure now is still an error response rather than a cut-off download.
      const first = await read(em, principal.organizationId, filters, EXPORT_BATCH);
      async function* batches() {
        let rows = first;
        for (;;) {
          yield rows.map(view);
          if (rows.length < EXPORT_BATCH) return;
          rows = await read(em, principal.organizationId, filters, EXPORT_BATCH, positionOf(rows.at(-1)!));
        }
      }
      const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
      return {
        stream: exportStream(batches(), query.format),
        contentType: AUDIT_EXPORT_MEDIA_TYPES[query.format],
        filename: `audit-${principal.organizationId}-${stamp}.${query.format}`,
      };
    },
  };
}

export type AuditQueryService = ReturnType<typeof createAuditQueryService>;

/** Named apart from other lists' orderings: a cursor issued by another list is refused here. */
function orderingOf(query: Pick<AuditFilters, 'sort'>): string {
  return 'audit:' + query.sort.map(([field, direction]) => (direction === 'desc' ? '-' : '') + field).join(',');
}

function positionOf(row: Row): Position {
  return [row.createdAt.toISOString(), row.id];
}

function view(row: Row): AuditRecordBody {
  return {
    id: row.id, created_at: row.createdAt.toISOString(), user_id: row.userId, api_key_id: row.apiKeyId, action: row.action,
    resource_type: row.resourceType, resource_id: row.resourceId, ip_address: row.ipAddress, status_code: row.statusCode,
  };
}
