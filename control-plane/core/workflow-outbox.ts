// What a request saved for a workflow reaches it, now or later: a deployment's or a cluster's desired state, a
// report's start. The request saves first, then sends within its deadline (core/workflow-calls.ts); what Temporal
// could not take stays marked unsent, and a loop (each API replica runs one, from the area's module; overlaps are
// harmless) sends it once Temporal answers. Sending twice is harmless: the workflows ignore what they have seen
// (a generation, a report's workflow id).
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { createPeriodic, type Periodic } from '../../lib/periodic.ts';
import { BACKGROUND_DEADLINE_MS } from './workflow-calls.ts';

export interface WorkflowOutboxSpec<Row extends { id: string }> {
  /** What the rows are, as the log names them: `deployment`, `cluster`, `report`. */
  readonly kind: string;
  /** The call to Temporal, within `deadlineMs` (a request's when absent). */
  deliver(row: Row, deadlineMs?: number): Promise<void>;
  /** Records that the row's workflow has what was saved (a later save is never marked by an earlier send). */
  markSent(em: EntityManager, row: Row): Promise<void>;
  /** Rows saved before `savedBefore` whose workflow has not had them, oldest first, at most `limit`. */
  unsent(em: EntityManager, savedBefore: Date, limit: number): Promise<Row[]>;
  readonly log: Pick<Logger, 'error' | 'info'>;
}

export interface ResendOptions {
  /** Rows saved more recently are left to the request that saved them. */
  graceMs?: number;
  batchSize?: number;
}

export interface WorkflowOutbox<Row> {
  /** Sends a saved row; true when its workflow has it. Never throws. */
  send(em: EntityManager, row: Row, deadlineMs?: number): Promise<boolean>;
  /** One pass over what is still unsent, stopping at the first Temporal does not take; answers how many were sent. */
  resend(orm: MikroORM, options?: ResendOptions): Promise<number>;
  /** `resend` every `intervalMs` once started, until stopped. */
  loop(orm: MikroORM, intervalMs?: number): Periodic;
}

export function workflowOutbox<Row extends { id: string }>(spec: WorkflowOutboxSpec<Row>): WorkflowOutbox<Row> {
  const { kind, log } = spec;
  const outbox: WorkflowOutbox<Row> = {
    async send(em, row, deadlineMs) {
      try {
        await spec.deliver(row, deadlineMs);
      } catch (error) {
        log.error({ err: error, [`${kind}Id`]: row.id }, `could not reach the ${kind}'s workflow; what was saved is sent once Temporal answers`);
        return false;
      }
      await spec.markSent(em, row);
      return true;
    },

    async resend(orm, options = {}) {
      const em = orm.em.fork();
      const unsent = await spec.unsent(em, new Date(Date.now() - (options.graceMs ?? 5_000)), options.batchSize ?? 100);
      let sent = 0;
      for (const row of unsent) {
        if (!(await outbox.send(em, row, BACKGROUND_DEADLINE_MS))) break; // Temporal is still away: next pass.
        sent += 1;
      }
      return sent;
    },

    loop(orm, intervalMs = 10_000) {
      return createPeriodic(async () => {
        const sent = await outbox.resend(orm);
        if (sent) log.info({ sent }, `sent what was saved for ${sent} ${kind} workflow(s) while Temporal was away`);
      }, { intervalMs, onError: (error) => log.error({ err: error }, `${kind} redelivery pass failed`) });
    },
  };
  return outbox;
}
