// Starting report workflows (core/workflow-outbox.ts): the API records a report pending, then starts its
// workflow; when Temporal cannot take it the report stays pending with no `workflowStartedAt`, and the loop
// reports/module.ts runs starts it once Temporal answers. A second start of the same report is refused by
// Temporal (workflow id = report id), never run twice.
import type { Logger } from 'pino';
import { workflowOutbox, type WorkflowOutbox } from '../core/workflow-outbox.ts';
import { ReportSchema, type Report } from './report.entity.ts';
import type { ReportOrchestrator } from './orchestrator.ts';

export interface ReportStartDeps {
  orchestrator: Pick<ReportOrchestrator, 'start'>;
  log: Pick<Logger, 'error' | 'info'>;
}

export function reportStarts(deps: ReportStartDeps): WorkflowOutbox<Report> {
  return workflowOutbox<Report>({
    kind: 'report',
    log: deps.log,
    deliver: (report, deadlineMs) => deps.orchestrator.start(report.id, deadlineMs),
    markSent: async (em, report) => {
      const startedAt = new Date();
      await em.nativeUpdate(ReportSchema, { id: report.id, workflowStartedAt: null }, { workflowStartedAt: startedAt });
      report.workflowStartedAt ??= startedAt;
    },
    unsent: (em, savedBefore, limit) => em.find(ReportSchema, {
      status: 'pending', workflowStartedAt: null, createdAt: { $lt: savedBefore },
    }, { orderBy: { createdAt: 'asc', id: 'asc' }, limit }),
  });
}
