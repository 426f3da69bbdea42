// Delivery of desired states to deployment workflows. The API saves a change, then sends it; when Temporal
// cannot be reached the change stays saved with `generation > sentGeneration`, and the redelivery loop sends
// it again once Temporal answers. Sending twice is harmless: the workflow ignores generations it has seen.
import { raw, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { DeploymentSchema, type Deployment } from './deployment.entity.ts';
import type { DeploymentOrchestrator } from './orchestrator.ts';
import { createPeriodic, type Periodic } from '../../lib/periodic.ts';
import { BACKGROUND_DEADLINE_MS } from '../core/workflow-calls.ts';

export interface DesiredStateDeliveryDeps {
  orchestrator: Pick<DeploymentOrchestrator, 'converge'>;
  log: Pick<Logger, 'error' | 'info'>;
}

export function createDesiredStateDelivery(deps: DesiredStateDeliveryDeps) {
  return {
    /**
     * Sends the deployment's committed desired state; true when its workflow has it. Never throws.
     * `deadlineMs`: a request's (core/workflow-calls.ts) when absent.
     */
    async send(em: EntityManager, deployment: Deployment, deadlineMs?: number): Promise<boolean> {
      try {
        await deps.orchestrator.converge(deployment, deadlineMs);
      } catch (error) {
        deps.log.error({ err: error, deploymentId: deployment.id }, 'could not reach the deployment workflow; the change is saved and will be sent again');
        return false;
      }
      // A newer generation sent concurrently is never rolled back.
      await em.nativeUpdate(DeploymentSchema, { id: deployment.id, sentGeneration: { $lt: deployment.generation } }, { sentGeneration: deployment.generation });
      return true;
    },
  };
}

export type DesiredStateDelivery = ReturnType<typeof createDesiredStateDelivery>;

export interface RedeliveryOptions {
  /** Changes younger than this are left to the request that saved them. */
  graceMs?: number;
  batchSize?: number;
}

/** One pass: sends every saved change its workflow has not received; answers how many were delivered. */
export async function redeliverDesiredStates(orm: MikroORM, delivery: DesiredStateDelivery, options: RedeliveryOptions = {}): Promise<number> {
  const em = orm.em.fork();
  const unsent = await em.find(DeploymentSchema, {
    deletedAt: null,
    updatedAt: { $lt: new Date(Date.now() - (options.graceMs ?? 5_000)) },
    [raw((alias) => `${alias}.generation > ${alias}.sent_generation`)]: [],
  }, { orderBy: { updatedAt: 'asc', id: 'asc' }, limit: options.batchSize ?? 100 });
  let delivered = 0;
  for (const deployment of unsent) {
    if (!(await delivery.send(em, deployment, BACKGROUND_DEADLINE_MS))) break; // Temporal is still away: try again next pass.
    delivered += 1;
  }
  return delivered;
}

/** Redelivery passes every `intervalMs` once started, until stopped (each API replica runs one, from deployments/module.ts; overlaps are harmless). */
export function createDesiredStateRedelivery(deps: DesiredStateDeliveryDeps & { orm: MikroORM; intervalMs?: number }): Periodic {
  const { orm, log } = deps;
  const delivery = createDesiredStateDelivery(deps);
  return createPeriodic(async () => {
    const delivered = await redeliverDesiredStates(orm, delivery);
    if (delivered) log.info({ delivered }, 'sent saved deployment changes to their workflows');
  }, { intervalMs: deps.intervalMs ?? 10_000, onError: (error) => log.error({ err: error }, 'desired-state redelivery pass failed') });
}
