// Delivery of desired states to deployment workflows (core/workflow-outbox.ts): the API saves a change, then
// sends it; one Temporal could not take stays saved with `generation > sentGeneration` and is sent again by the
// loop deployments/module.ts runs. The workflow ignores generations it has seen.
import { raw } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { workflowOutbox, type WorkflowOutbox } from '../core/workflow-outbox.ts';
import { DeploymentSchema, type Deployment } from './deployment.entity.ts';
import type { DeploymentOrchestrator } from './orchestrator.ts';

export interface DesiredStateDeliveryDeps {
  orchestrator: Pick<DeploymentOrchestrator, 'converge'>;
  log: Pick<Logger, 'error' | 'info'>;
}

export type DesiredStateDelivery = WorkflowOutbox<Deployment>;

export function createDesiredStateDelivery(deps: DesiredStateDeliveryDeps): DesiredStateDelivery {
  return workflowOutbox<Deployment>({
    kind: 'deployment',
    log: deps.log,
    deliver: (deployment, deadlineMs) => deps.orchestrator.converge(deployment, deadlineMs),
    // A newer generation sent concurrently is never rolled back.
    markSent: async (em, deployment) => {
      await em.nativeUpdate(DeploymentSchema, { id: deployment.id, sentGeneration: { $lt: deployment.generation } }, { sentGeneration: deployment.generation });
    },
    unsent: (em, savedBefore, limit) => em.find(DeploymentSchema, {
      deletedAt: null,
      updatedAt: { $lt: savedBefore },
      [raw((alias) => `${alias}.generation > ${alias}.sent_generation`)]: [],
    }, { orderBy: { updatedAt: 'asc', id: 'asc' }, limit }),
  });
}
