// Starting report workflows. The API records a report pending, then starts its workflow; when Temporal cannot be
// reached the report stays pending with no `workflowStartedAt`, and the loop (run from reports/module.ts) starts
// it once Temporal answers. A second start of the same report is refused by Temporal (workflow id = report id),
// never run twice.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { createPeriodic, type Periodic } from '../../lib/periodic.ts';
import { BACKGROUND_DEADLINE_MS } from '../core/workflow-calls.ts';
import { ReportSchema, type Report } from './report.entity.ts';
import type { ReportOrchestrator } from './orchestrator.ts';

export interface ReportStartDeps {
  orchestrator: Pick<ReportOrchestrator, 'start'>;
  log: Pick<Logger, 'error' | 'info'>;
}

/** Starts the report's workflow and records it; false (logged) when Temporal could not take it. Never throws. */
export async function startReport(em: EntityManager, deps: ReportStartDeps, report: Report, deadlineMs?: number): Promise<boolean> {
  try {
    await deps.orchestrator.start(report.id, deadlineMs);
  } catch (error) {
    deps.log.error({ err: error, reportId: report.id }, 'could not start the report workflow; the report stays pending and is started later');
    return false;
  }
  const startedAt = new Date();
  await em.nativeUpdate(ReportSchema, { id: report.id, workflowStartedAt: null }, { workflowStartedAt: startedAt });
  report.workflowStartedAt ??= startedAt;
  return true;
}

/** One pass: starts the workflow of every pending report that has none; answers how many were started. */
export async function startPendingReports(orm: MikroORM, deps: ReportStartDeps, options: { graceMs?: number } = {}): Promise<number> {
  const em = orm.em.fork();
  const pending = await em.find(ReportSchema, {
    status: 'pending', workflowStartedAt: null, createdAt: { $lt: new Date(Date.now() - (options.graceMs ?? 5_000)) },
  }, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: 100 });
  let started = 0;
  for (const report of pending) {
    if (!(await startReport(em, deps, report, BACKGROUND_DEADLINE_MS))) break; // Temporal is still away: next pass.
    started += 1;
  }
  return started;
}

/** Passes every `intervalMs` once started, until stopped (each API replica runs one; overlaps are harmless). */
export function createReportStarts(deps: ReportStartDeps & { orm: MikroORM; intervalMs?: number }): Periodic {
  return createPeriodic(async () => {
    const started = await startPendingReports(deps.orm, deps);
    if (started) deps.log.info({ started }, 'started the workflows of reports asked for while Temporal was away');
  }, { intervalMs: deps.intervalMs ?? 10_000, onError: (error) => deps.log.error({ err: error }, 'report start pass failed') });
}
