// The error tracker: every unhandled error (the ones answered as 500) is counted in PostgreSQL under a
// fingerprint, so administrators see each distinct failure once with its count and first/last sighting;
// when ERROR_TRACKER_URL is set each occurrence is also POSTed there as JSON, without holding up the answer.
import { createHash } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { newId } from '../../lib/ids.ts';
import type { CursorCodec } from '../core/pagination.ts';

const TOP_FRAMES = 5;

export interface ErrorContext {
  method: string;
  path: string;
  requestId: string;
}

const LIBRARY_FRAME = /node_modules|\(node:|at node:/;

/**
 * Name and top stack frames, with paths cut to file names so every installation groups alike. Kiln's own
 * frames are preferred: errors raised inside a library (every database error) would otherwise all share
 * the library's frames, whichever route they came from.
 */
export function fingerprintOf(error: unknown): { fingerprint: string; name: string; message: string; stack: string } {
  const e = error instanceof Error ? error : new Error(String(error));
  const all = (e.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at '));
  const own = all.filter((line) => !LIBRARY_FRAME.test(line));
  const frames = (own.length ? own : all).slice(0, TOP_FRAMES)
    .map((line) => line.trim().replace(/(?:file:\/\/)?\/[^\s()]*\/([^/\s()]+?)(?:\?[^\s():]*)?:(\d+):\d+/g, '$1:$2'));
  const fingerprint = createHash('sha256').update([e.name, ...frames].join('\n')).digest('hex').slice(0, 32);
  return { fingerprint, name: e.name, message: e.message, stack: frames.join('\n') };
}

const RECORD = `
  INSERT INTO error_issue (id, created_at, fingerprint, name, message, stack, count, last_seen_at, last_request)
  VALUES (?, now(), ?, ?, ?, ?, 1, now(), ?)
  ON CONFLICT (fingerprint) DO UPDATE SET count = error_issue.count + 1, last_seen_at = now(),
    message = excluded.message, stack = excluded.stack, last_request = excluded.last_request`;

const ORDERING = 'error-issues:-last_seen_at,-id';

export interface ErrorTrackerDeps {
  orm: MikroORM;
  log: Pick<Logger, 'warn' | 'error'>;
  cursors: CursorCodec;
  /** External tracker receiving each occurrence as a JSON POST; unset: kept in PostgreSQL only. */
  forwardUrl?: string | undefined;
  environment: string;
}

export function createErrorTracker(deps: ErrorTrackerDeps) {
  async function forward(event: Record<string, unknown>): Promise<void> {
    const response = await fetch(deps.forwardUrl!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Kiln-ErrorTracker/1' },
      body: JSON.stringify(event),
      signal: AbortSignal.timeout(5_000),
    });
    await response.body?.cancel();
    if (!response.ok) throw new Error(`the error tracker answered ${response.status}`);
  }

  return {
    /** Never throws: tracking an error must not turn into another one. */
    async capture(error: unknown, context: ErrorContext): Promise<void> {
      const issue = fingerprintOf(error);
      const lastRequest = `${context.method} ${context.path} (${context.requestId})`.slice(0, 255);
      await deps.orm.em.getConnection()
        .execute(RECORD, [newId('err'), issue.fingerprint, issue.name.slice(0, 255), issue.message, issue.stack, lastRequest])
        .catch((failure: unknown) => deps.log.error({ err: failure }, 'could not record an unhandled error'));
      if (deps.forwardUrl) {
        void forward({ ...issue, environment: deps.environment, timestamp: new Date().toISOString(), request: context })
          .catch((failure: unknown) => deps.log.warn({ err: failure }, 'could not forward an error to the error tracker'));
      }
    },

    /** Issues, most recently seen first. */
    async issues(em: EntityManager, query: { limit: number; cursor?: string | undefined }) {
      const after = query.cursor ? JSON.parse(deps.cursors.decode(query.cursor, ORDERING)) as [string, string] : undefined;
      const rows = await em.getConnection().execute<IssueRow[]>(
        `SELECT id, fingerprint, name, message, stack, count, created_at, last_seen_at, last_request FROM error_issue
         ${after ? 'WHERE (last_seen_at, id) < (?, ?)' : ''} ORDER BY last_seen_at DESC, id DESC LIMIT ?`,
        [...(after ? [new Date(after[0]), after[1]] : []), query.limit + 1],
      );
      const issues = rows.map((r) => ({
        id: r.id, fingerprint: r.fingerprint, name: r.name, message: r.message, stack: r.stack, count: r.count,
        firstSeenAt: new Date(r.created_at).toISOString(), lastSeenAt: new Date(r.last_seen_at).toISOString(), lastRequest: r.last_request,
      }));
      return deps.cursors.page(issues, query.limit, ORDERING, (i) => [i.lastSeenAt, i.id]);
    },
  };
}

interface IssueRow {
  id: string; fingerprint: string; name: string; message: string; stack: string; count: number; created_at: Date; last_seen_at: Date; last_request: string;
}

export type ErrorTracker = ReturnType<typeof createErrorTracker>;
