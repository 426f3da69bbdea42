// What report generation reads and writes in PostgreSQL: the report's row, and the report's data read in
// keyset batches (oldest first), so a report of any size is streamed rather than loaded.
import type { MikroORM } from '@mikro-orm/postgresql';
import { ReportSchema, type Report, type ReportKind } from '../../control-plane/reports/report.entity.ts';

const BATCH = 1_000;

/** The columns of each kind of report, in order; every row read is an object with these keys. */
export const REPORT_COLUMNS: Readonly<Record<ReportKind, readonly string[]>> = {
  customers: ['organization_id', 'name', 'plan', 'created_at', 'members', 'live_deployments', 'credits_cents', 'requests_in_window'],
  deployments: ['deployment_id', 'organization_id', 'name', 'model', 'gpu', 'status', 'replicas', 'created_at', 'deleted_at', 'failure_reason'],
  audit: ['audit_id', 'created_at', 'organization_id', 'user_id', 'api_key_id', 'action', 'resource_type', 'resource_id', 'ip_address', 'status_code'],
};

/**
 * One batch after the (created_at, id) position. `from`/`to` bound the rows listed, except for customers,
 * where every organization is listed and the window bounds the requests counted.
 */
const BATCH_SQL: Readonly<Record<ReportKind, string>> = {
  customers: `
    SELECT o.id AS organization_id, o.name, o.plan, o.created_at,
      (SELECT count(*)::int FROM membership m WHERE m.organization_id = o.id) AS members,
      (SELECT count(*)::int FROM deployment d WHERE d.organization_id = o.id AND d.deleted_at IS NULL) AS live_deployments,
      o.credits_cents,
      (SELECT count(*)::int FROM audit_log a WHERE a.organization_id = o.id AND a.created_at >= ? AND a.created_at < ?) AS requests_in_window,
      o.created_at AS position_at, o.id AS position_id
    FROM organization o WHERE (o.created_at, o.id) > (?, ?) ORDER BY o.created_at, o.id LIMIT ?`,
  deployments: `
    SELECT d.id AS deployment_id, d.organization_id, d.name, d.model, d.gpu, d.status, d.replicas, d.created_at, d.deleted_at, d.failure_reason,
      d.created_at AS position_at, d.id AS position_id
    FROM deployment d WHERE d.created_at >= ? AND d.created_at < ? AND (d.created_at, d.id) > (?, ?) ORDER BY d.created_at, d.id LIMIT ?`,
  audit: `
    SELECT a.id AS audit_id, a.created_at, a.organization_id, a.user_id, a.api_key_id, a.action, a.resource_type, a.resource_id, a.ip_address, a.status_code,
      a.created_at AS position_at, a.id AS position_id
    FROM audit_log a WHERE a.created_at >= ? AND a.created_at < ? AND (a.created_at, a.id) > (?, ?) ORDER BY a.created_at, a.id LIMIT ?`,
};

export type ReportRow = Record<string, unknown>;

export interface ReportStore {
  find(id: string): Promise<Pick<Report, 'id' | 'kind' | 'from' | 'to'> | undefined>;
  update(id: string, changes: Partial<Pick<Report, 'status' | 'rows' | 'bytes' | 'error' | 'completedAt'>>): Promise<void>;
  /** The report's rows in batches. */
  batches(report: Pick<Report, 'kind' | 'from' | 'to'>): AsyncIterable<ReportRow[]>;
}

export function reportStore(orm: MikroORM): ReportStore {
  return {
    async find(id) {
      return (await orm.em.fork().findOne(ReportSchema, { id })) ?? undefined;
    },
    async update(id, changes) {
      await orm.em.fork().nativeUpdate(ReportSchema, { id }, changes);
    },
    async *batches(report) {
      const window = [report.from ?? new Date(0), report.to ?? new Date('9999-12-31T00:00:00Z')];
      let position: [Date, string] = [new Date(0), ''];
      for (;;) {
        const rows = await orm.em.fork().getConnection().execute<ReportRow[]>(BATCH_SQL[report.kind], [...window, ...position, BATCH]);
        if (!rows.length) return;
        const last = rows.at(-1)!;
        position = [last.position_at as Date, last.position_id as string];
        yield rows;
        if (rows.length < BATCH) return;
      }
    },
  };
}
