// Writes a report's CSV into PostgreSQL, where any API replica serves it from: streamed into chunks inside the
// transaction that marks the report ready, so a reader never sees half a report. Heartbeats once per batch, so
// a stuck write is noticed and retried.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { stringify } from 'csv-stringify';
import type { ReportWorkflowInput } from '../contract/reports.ts';
import { REPORT_COLUMNS, type ReportStore } from './store.ts';

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
      let rows = 0;
      async function* records() {
        for await (const batch of deps.store.batches(report!)) {
          Context.current().heartbeat({ rows });
          for (const row of batch) {
            rows += 1;
            yield columns.map((column) => {
              const value = row[column];
              return value instanceof Date ? value.toISOString() : value;
            });
          }
        }
      }
      await pipeline(Readable.from(records()), stringify({ header: true, columns: [...columns] }), (csv) => deps.store.saveReady(report.id, csv, () => rows));
      return { rows };
    },

    async markReportFailed(input: ReportWorkflowInput, reason: string): Promise<void> {
      await deps.store.update(input.reportId, { status: 'failed', error: reason, completedAt: new Date() });
    },
  };
}

export type ReportActivities = ReturnType<typeof createReportActivities>;
