// CSV reports for platform administrators: the request is recorded, its workflow started (or, while Temporal
// is away, started later by reports/delivery.ts), and the answer given at once; the worker writes the CSV into the database (workflows/reports) and the administrator polls,
// then downloads.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Principal } from '../auth/principal.ts';
import { UserSchema } from '../auth/user.entity.ts';
import { newId } from '../../lib/ids.ts';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import type { CursorCodec } from '../core/pagination.ts';
import type { StreamReply } from '../http/routes.ts';
import { reportContent } from './content.ts';
import { ReportSchema, type Report } from './report.entity.ts';
import { reportStarts } from './delivery.ts';
import type { ReportOrchestrator } from './orchestrator.ts';
import type { GenerateReportInput, ListReportsInput, ReportViewBody } from './schemas.ts';

/** Named apart from other lists' orderings: a cursor issued by another list is refused here. */
const ORDERING = 'reports:-created_at,-id';

export interface ReportServiceDeps {
  cursors: CursorCodec;
  orchestrator: Pick<ReportOrchestrator, 'start'>;
  log: Pick<Logger, 'error' | 'info'>;
}

export function createReportService(deps: ReportServiceDeps) {
  const starts = reportStarts(deps);
  async function find(em: EntityManager, id: string): Promise<Report> {
    const report = await em.findOne(ReportSchema, { id });
    if (!report) throw new NotFoundError(`Report ${id} not found`);
    return report;
  }

  /** Reports as the API shows them, with the e-mail of whoever asked (one query for a whole page). */
  async function views(em: EntityManager, reports: readonly Report[]): Promise<ReportViewBody[]> {
    const ids = [...new Set(reports.map((r) => r.requestedBy))];
    const users = ids.length ? await em.find(UserSchema, { id: { $in: ids } }, { fields: ['id', 'email'] }) : [];
    const emails = new Map(users.map((u) => [u.id, u.email]));
    return reports.map((r) => view(r, emails.get(r.requestedBy) ?? null));
  }

  return {
    /** Every report, newest first, in cursor pages; optionally of one kind or status. */
    async list(em: EntityManager, query: ListReportsInput) {
      const where: Record<string, unknown>[] = [];
      if (query.kind) where.push({ kind: query.kind });
      if (query.status) where.push({ status: query.status });
      if (query.cursor) {
        const [createdAt, id] = JSON.parse(deps.cursors.decode(query.cursor, ORDERING)) as [string, string];
        const at = new Date(createdAt);
        where.push({ $or: [{ createdAt: { $lt: at } }, { createdAt: at, id: { $lt: id } }] });
      }
      const rows = await em.find(ReportSchema, where.length ? { $and: where } : {}, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: query.limit + 1 });
      return deps.cursors.page(await views(em, rows), query.limit, ORDERING, (r) => [r.createdAt, r.id]);
    },

    async generate(em: EntityManager, principal: Principal, input: GenerateReportInput): Promise<ReportViewBody> {
      const report = em.create(ReportSchema, {
        id: newId('rpt'), kind: input.kind, from: input.from ? new Date(input.from) : null, to: input.to ? new Date(input.to) : new Date(),
        status: 'pending', requestedBy: principal.userId, workflowStartedAt: null,
      });
      await em.flush();
      // Temporal away: the report stays pending, and its workflow is started once Temporal answers.
      await starts.send(em, report);
      return (await views(em, [report]))[0]!;
    },

    get: async (em: EntityManager, id: string) => (await views(em, [await find(em, id)]))[0]!,

    /** The CSV of a ready report, streamed from the database. */
    async download(em: EntityManager, id: string): Promise<StreamReply> {
      const report = await find(em, id);
      if (report.status !== 'ready') throw new ConflictError(`Report ${id} is ${report.status}, not ready`, { field: 'id', status: report.status });
      return { stream: await reportContent(em, report.id), contentType: 'text/csv', filename: `${report.kind}-${report.id}.csv` };
    },
  };
}

function view(r: Report, email: string | null): ReportViewBody {
  const iso = (d: Date | null | undefined) => d?.toISOString() ?? null;
  return {
    id: r.id, kind: r.kind, status: r.status, from: iso(r.from), to: iso(r.to), requestedBy: { id: r.requestedBy, email }, rows: r.rows ?? null, bytes: r.bytes ?? null,
    error: r.error ?? null, createdAt: r.createdAt.toISOString(), completedAt: iso(r.completedAt),
    statusUrl: `/v1/admin/reports/${r.id}`, downloadUrl: `/v1/admin/reports/${r.id}/download`,
  };
}

export type ReportService = ReturnType<typeof createReportService>;
