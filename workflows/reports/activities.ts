// Writes a report's CSV into PostgreSQL, where any API replica serves it from: a batch of rows at a time, into
// chunks stored in the transaction that marks the report ready, so a reader never sees half a report.
// Heartbeats once per batch, so a stuck write is noticed and retried.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { stringify } from 'csv-stringify/sync';
import type { ReportWorkflowInput } from '../contract/reports.ts';
import { REPORT_COLUMNS, type ReportRow, type ReportStore } from './store.ts';

export interface ReportActivityDeps {
  readonly store: ReportStore;
}

export function createReportActivities(deps: ReportActivityDeps) {
  return {
    async writeReport(input: ReportWorkflowInput): Promise<{ rows: number }> {
      const report = await deps.store.find(input.reportId);
      if (!report) throw ApplicationFailure.create({ message: `report ${input.reportId} does not exist`, type: 'ReportNotFound' });
      await deps.store.update(report.id, { status: 'running' });
      const columns = REPORT_COLUMNS[report.kind];
      // A batch at a time (a thousand rows): the header first, even for a report with no rows.
      async function* csv(batches: AsyncIterable<ReportRow[]>) {
        let rows = 0;
        yield stringify([], { header: true, columns: [...columns] });
        for await (const batch of batches) {
          Context.current().heartbeat({ rows });
          rows += batch.length;
          yield stringify(batch.map((row) => columns.map((column) => {
            const value = row[column];
            return value instanceof Date ? value.toISOString() : value;
          })));
        }
      }
      return deps.store.saveReady(report, csv);
    },

    async markReportFailed(input: ReportWorkflowInput, reason: string): Promise<void> {
      await deps.store.update(input.reportId, { status: 'failed', error: reason, completedAt: new Date() });
    },
  };
}

export type ReportActivities = ReturnType<typeof createReportActivities>;
