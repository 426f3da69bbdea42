// The audit trail: a record per use of an API key and per mutation by anyone, written after the request
// in its own statement (so a failed or rolled-back request is still recorded), together with the key's
// last-used time. A mutation's record is written before its answer is sent; reads made with a key (the
// busy path: dashboards, scripts polling) are queued and written in batches shortly after their answers,
// and close() writes whatever is still queued, so a normal shutdown loses none.
import type pg from 'pg';
import type { Logger } from 'pino';
import { newId } from '../../lib/ids.ts';
import { isDataException } from '../core/errors.ts';

/** What a record carries beyond the request itself (e.g. an inference's token counts), as JSON. */
export type AuditDetails = Readonly<Record<string, unknown>>;

export interface AuditEntry {
  organizationId: string;
  userId: string;
  apiKeyId: string | null;
  action: string;
  resourceType: string;
  resourceId: string | null;
  ipAddress: string;
  statusCode: number;
  /** When the request was answered: a queued record keeps its own time. */
  createdAt: Date;
  details?: AuditDetails | null;
}

/** A queued record is written at most this long after its request. */
export const AUDIT_BATCH_MS = 100;
/** A batch this large is written at once. */
const MAX_BATCH = 500;
/** While the database refuses writes, at most this many records wait for another try. */
const MAX_QUEUED = 50_000;

// One statement for any number of records: atomic on its own, one round trip. A key's last-used time is
// kept to the minute: rewriting it on every request would serialize a busy key's requests on its row.
const RECORD_USE = `
  WITH record AS (
    INSERT INTO audit_log (id, created_at, organization_id, user_id, api_key_id, action, resource_type, resource_id, ip_address, status_code, details)
    SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $12::jsonb[])
  )
  UPDATE api_key SET last_used_at = now()
  WHERE id = ANY($11::text[]) AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`;

/** The text columns' width: a request's path or id (anything a caller sent) is cut to it, never refused. */
const COLUMN_WIDTH = 255;
// PostgreSQL text holds no NUL: a raw path or id (audited before, or without, validation) may carry one.
const clip = (value: string) => value.replaceAll('\u0000', '').slice(0, COLUMN_WIDTH);

export function createAuditService(deps: { pool: pg.Pool; log: Logger }) {
  let queue: AuditEntry[] = [];
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  // One batch is written at a time, so a slow commit holds one pooled connection, not one per batch.
  let writing: Promise<void> | undefined;

  async function write(entries: AuditEntry[]): Promise<void> {
    await deps.pool.query({
      name: 'kiln-audit-record',
      text: RECORD_USE,
      values: [
        entries.map(() => newId('aud')), entries.map((e) => e.createdAt), entries.map((e) => e.organizationId), entries.map((e) => e.userId),
        entries.map((e) => e.apiKeyId), entries.map((e) => clip(e.action)), entries.map((e) => clip(e.resourceType)),
        entries.map((e) => (e.resourceId === null ? null : clip(e.resourceId))), entries.map((e) => clip(e.ipAddress)), entries.map((e) => e.statusCode),
        [...new Set(entries.flatMap((e) => e.apiKeyId ?? []))],
        entries.map((e) => (e.details ? JSON.stringify(e.details) : null)),
      ],
    });
  }

  /** Writes the queued records; resolves when they are written. */
  function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    if (writing || !queue.length) return writing ?? Promise.resolve();
    writing = (async () => {
      // Records queued meanwhile wait for the next batch, unless a full batch is waiting or the API stops.
      for (let first = true; queue.length && (first || closed || queue.length >= MAX_BATCH); first = false) {
        const batch = queue.splice(0, MAX_BATCH);
        try {
          await write(batch);
        } catch (error) {
          // Kept for the next try unless it can never succeed (PostgreSQL refused the data itself), the API is
          // stopping, or too many are waiting already.
          const kept = !closed && !isDataException(error) && queue.length + batch.length <= MAX_QUEUED;
          deps.log.error({ err: error, records: batch.length, kept }, 'audit records not written');
          if (kept) queue = [...batch, ...queue];
          break;
        }
      }
      writing = undefined;
      if (queue.length && !closed) timer ??= setTimeout(flush, AUDIT_BATCH_MS);
    })();
    return writing;
  }

  function schedule(): void {
    if (queue.length >= MAX_BATCH) void flush();
    else timer ??= setTimeout(flush, AUDIT_BATCH_MS);
  }

  return {
    /** Writes the record now (mutations). */
    async record(entry: AuditEntry): Promise<void> {
      await write([entry]);
    },

    /** Queues the record for the next batch (reads). */
    recordSoon(entry: AuditEntry): void {
      queue.push(entry);
      if (closed) void flush();
      else schedule();
    },

    /** Writes everything queued. Call after the server stopped answering. */
    async close(): Promise<void> {
      closed = true;
      // A batch being written may have started before the last records were queued.
      while (writing || queue.length) await (writing ?? flush());
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
