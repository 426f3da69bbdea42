// The deployments' side of recovery (/v1/recovery, the assistant's diagnoses): a deployment's failure with its
// recent events and what its workflow is retrying, the organization's failed deployments, and the recovery
// actions, which change the desired state as any other change does.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { ConflictError } from '../core/errors.ts';
import type { RecoveryAction } from '../recovery/schemas.ts';
import { DeploymentEventSchema } from './deployment-event.entity.ts';
import { DeploymentSchema } from './deployment.entity.ts';
import type { DesiredStateDelivery } from './desired-state-delivery.ts';
import { changeDesiredState, findDeployment } from './lifecycle.ts';
import type { DeploymentOrchestrator } from './orchestrator.ts';
import { deploymentView } from './view.ts';

export interface DeploymentRecoveryDeps {
  delivery: DesiredStateDelivery;
  /** What a deployment's workflow is doing and retrying. */
  orchestrator: Pick<DeploymentOrchestrator, 'inspect'>;
}

export function createDeploymentRecovery(deps: DeploymentRecoveryDeps) {
  return {
    /** A deployment's failure, its recent events and what its workflow is retrying. */
    async inspect(em: EntityManager, principal: Principal, id: string) {
      const deployment = await findDeployment(em, principal, id);
      const events = await em.find(DeploymentEventSchema, { deploymentId: id }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 20 });
      return {
        id, name: deployment.name, status: deployment.status, failureReason: deployment.failureReason ?? null, generation: deployment.generation,
        events: events.map((e) => ({ type: e.type, generation: e.generation, createdAt: e.createdAt.toISOString() })),
        workflow: await deps.orchestrator.inspect(id),
      };
    },

    /** Retry a failed deployment (optionally after `pulumi refresh`), or force its deletion. */
    async recover(em: EntityManager, principal: Principal, id: string, action: RecoveryAction) {
      return deploymentView(await changeDesiredState(deps.delivery, em, principal, id, (deployment) => {
        if (action === 'force_delete') {
          Object.assign(deployment, { deleteRequested: true, forceDelete: true, status: 'deleting' });
        } else {
          if (deployment.status !== 'failed') throw new ConflictError(`Deployment ${id} has not failed (status ${deployment.status}); there is nothing to retry`, { field: 'id' });
          if (action === 'refresh_and_retry') deployment.refreshes += 1;
        }
      }));
    },

    /** Forgets a failure's reason once it has been dealt with. */
    async clearFailure(em: EntityManager, principal: Principal, id: string) {
      const deployment = await findDeployment(em, principal, id);
      deployment.failureReason = null;
      await em.flush();
      return deploymentView(deployment);
    },

    /** The organization's failed deployments, the most recently updated first, at most 100. */
    async failed(em: EntityManager, principal: Principal) {
      const deployments = await em.find(DeploymentSchema, { organization: principal.organizationId, status: 'failed', deletedAt: null }, { orderBy: { updatedAt: 'desc', id: 'desc' }, limit: 100 });
      return deployments.map((d) => ({ id: d.id, name: d.name, failureReason: d.failureReason ?? null, updatedAt: d.updatedAt.toISOString() }));
    },
  };
}
