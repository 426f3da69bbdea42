// What report generation reads and writes in PostgreSQL: the report's row, the report's data read in
// keyset batches (oldest first), and the CSV written back in chunks, so a report of any size is streamed
// rather than loaded.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { ReportSchema, type Report, type ReportKind } from '../../control-plane/reports/report.entity.ts';

const BATCH = 1_000;

/**
 * The size of a report_chunk row's content (the last one's is smaller): the most the worker or the API holds of
 * a report at once, and large enough that a gigabyte is a thousand rows.
 */
export const REPORT_CHUNK_BYTES = 1024 * 1024;

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
  update(id: string, changes: Partial<Pick<Report, 'status' | 'error' | 'completedAt'>>): Promise<void>;
  /**
   * Writes the report: `csv` turns the report's rows, read in batches, into its CSV, which is stored with the
   * report marked ready in one transaction, so the API serves a report whole or not at all. Replaces what an
   * earlier attempt stored. Answers how many rows the report holds.
   */
  saveReady(report: Pick<Report, 'id' | 'kind' | 'from' | 'to'>, csv: (batches: AsyncIterable<ReportRow[]>) => AsyncIterable<string>): Promise<{ rows: number }>;
}

export function reportStore(orm: MikroORM): ReportStore {
  return {
    async find(id) {
      return (await orm.em.fork().findOne(ReportSchema, { id })) ?? undefined;
    },
    async update(id, changes) {
      await orm.em.fork().nativeUpdate(ReportSchema, { id }, changes);
    },
    async saveReady(report, csv) {
      // One connection for the whole write (minutes for a large audit report): the rows are read through the
      // transaction too, so reports running at once never wait on each other for a second connection. It holds
      // the report's row, which only another attempt at the same report waits for.
      return orm.em.fork().transactional(async (em) => {
        // The row locked first: an attempt Temporal has given up on but that still runs finishes (or fails) before
        // this one replaces its chunks, rather than the two interleaving.
        await em.execute('SELECT id FROM report WHERE id = ? FOR UPDATE', [report.id]);
        await em.execute('DELETE FROM report_chunk WHERE report_id = ?', [report.id]);
        let rows = 0;
        async function* batches() {
          for await (const batch of batchesOf(em, report)) {
            rows += batch.length;
            yield batch;
          }
        }
        let sequence = 0;
        let bytes = 0;
        for await (const chunk of chunks(csv(batches()), REPORT_CHUNK_BYTES)) {
          await em.execute('INSERT INTO report_chunk (report_id, sequence, data) VALUES (?, ?, ?)', [report.id, sequence++, chunk]);
          bytes += chunk.length;
        }
        await em.execute(`UPDATE report SET status = 'ready', rows = ?, bytes = ?, completed_at = ? WHERE id = ?`, [rows, bytes, new Date(), report.id]);
        return { rows };
      });
    },
  };
}

/** The report's rows in batches. */
async function* batchesOf(em: EntityManager, report: Pick<Report, 'kind' | 'from' | 'to'>): AsyncIterable<ReportRow[]> {
  const window = [report.from ?? new Date(0), report.to ?? new Date('9999-12-31T00:00:00Z')];
  let position: [Date, string] = [new Date(0), ''];
  for (;;) {
    const rows = await em.execute<ReportRow[]>(BATCH_SQL[report.kind], [...window, ...position, BATCH]);
    if (!rows.length) return;
    const last = rows.at(-1)!;
    position = [last.position_at as Date, last.position_id as string];
    yield rows;
    if (rows.length < BATCH) return;
  }
}

/** `source` regrouped into buffers of `size` bytes, the last one smaller. */
async function* chunks(source: AsyncIterable<string>, size: number): AsyncIterable<Buffer> {
  let pending: Buffer[] = [];
  let length = 0;
  for await (const piece of source) {
    const buffer = Buffer.from(piece);
    pending.push(buffer);
    length += buffer.length;
    while (length >= size) {
      const whole = Buffer.concat(pending, length);
      yield whole.subarray(0, size);
      pending = [whole.subarray(size)];
      length -= size;
    }
  }
  if (length > 0) yield Buffer.concat(pending, length);
}
