// Writes a lifecycle edge to PostgreSQL: the deployment's status row and, when the edge has one, its event,
// in one transaction. Idempotent: a retried write sets the same status and the event's unique key keeps
// it single. Edges arrive in order: one workflow writes them, one activity at a time.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { newId } from '../../lib/ids.ts';
import type { DeploymentWebhookPayload } from '../../lib/webhook-payloads.ts';
import { DeploymentSchema } from '../../control-plane/deployments/deployment.entity.ts';
import { DeploymentEventSchema, type DeploymentEvent } from '../../control-plane/deployments/deployment-event.entity.ts';
import type { StatusUpdate } from './activities.ts';
import { ReplicaRecordSchema } from '../../control-plane/billing/replica-record.entity.ts';
import { billableReplicas } from '../../catalog/billing.ts';
import { notifyMembers, OWNERS_AND_ADMINS } from '../notifications.ts';

/** Starts webhook deliveries of a recorded event (webhooks/store.ts). */
export interface EventDeliveries {
  startFor(event: Pick<DeploymentEvent, 'id' | 'organizationId' | 'type'>): Promise<void>;
}

/**
 * `log`: each edge is logged once written, with the deployment's id (which is its workflow's id), so an SRE
 * finds a deployment's history in the worker's log and opens its workflow in the Temporal UI.
 */
export function createStatusStore(orm: MikroORM, deliveries?: EventDeliveries, log?: Logger) {
  return {
    async record(update: StatusUpdate): Promise<void> {
      await writeEdge(update);
      const reason = reasonOf(update);
      log?.[update.status === 'failed' ? 'warn' : 'info']({
        deploymentId: update.deploymentId, workflowId: update.deploymentId, status: update.status, generation: update.generation, replicas: update.replicas,
        ...(update.event ? { event: update.event } : {}), ...(reason ? { reason } : {}),
      }, `deployment ${update.status}`);
      if (!update.event || !deliveries) return;
      // After the commit, and on every retry too: the deliveries' workflow ids make a second start a no-op.
      const event = await orm.em.fork().findOneOrFail(DeploymentEventSchema, { deploymentId: update.deploymentId, type: update.event, generation: update.generation, sequence: update.sequence ?? 0 });
      await deliveries.startFor(event);
    },
  };

  async function writeEdge(update: StatusUpdate): Promise<void> {
    const reason = reasonOf(update);
    await orm.em.fork().transactional(async (em) => {
      const deployment = await em.findOneOrFail(DeploymentSchema, { id: update.deploymentId }, { populate: ['organization'] });
      deployment.status = update.status;
      deployment.currentReplicas = update.replicas;
      deployment.failureReason = update.failureReason ?? null;
      if (update.status === 'deleted') deployment.deletedAt ??= new Date();
      // Metering's history: the replicas charged from the edge on (a retried write lands on the same row).
      await em.upsert(ReplicaRecordSchema, {
        id: newId('rep'), organizationId: deployment.organization.id, deploymentId: deployment.id, status: update.status,
        replicas: billableReplicas(update.status, update.replicas), gpu: deployment.gpu, gpusPerReplica: deployment.gpusPerReplica,
        observedAt: new Date(update.at ?? Date.now()), createdAt: new Date(),
      }, { onConflictFields: ['deploymentId', 'observedAt'], onConflictMergeFields: ['status', 'replicas'], disableIdentityMap: true });
      if (!update.event) return;
      const payload: DeploymentWebhookPayload = {
        event: update.event,
        timestamp: new Date().toISOString(),
        data: {
          id: deployment.id, name: deployment.name, status: update.status, endpoint: deployment.endpoint, gpu: deployment.gpu,
          replicas: update.replicas, ...(update.previousReplicas === undefined ? {} : { previousReplicas: update.previousReplicas }),
          ...(reason ? { reason } : {}),
        },
      };
      const key = { deploymentId: deployment.id, type: update.event, generation: update.generation, sequence: update.sequence ?? 0 };
      // A retried write finds its event there: its notification was written with it.
      const recorded = await em.count(DeploymentEventSchema, key) > 0;
      await em.upsert(DeploymentEventSchema, {
        id: newId('evt'), deploymentId: deployment.id, organizationId: deployment.organization.id,
        type: update.event, generation: update.generation, sequence: update.sequence ?? 0, payload, createdAt: new Date(),
      }, { onConflictAction: 'ignore', onConflictFields: ['deploymentId', 'type', 'generation', 'sequence'], disableIdentityMap: true });
      if (!recorded && (update.event === 'deployment.failed' || update.event === 'deployment.running')) {
        // To the organization's owners and admins: Kiln keeps no deployment's creator to tell instead.
        const failed = update.event === 'deployment.failed';
        await notifyMembers(em, deployment.organization.id, OWNERS_AND_ADMINS, update.event, {
          message: failed ? `Deployment ${deployment.name} failed${reason ? `: ${reason}` : ''}.` : `Deployment ${deployment.name} is running${deployment.endpoint ? ` at ${deployment.endpoint}` : ''}.`,
          deploymentId: deployment.id, deploymentName: deployment.name, status: failed ? 'failed' : 'running', reason: reason ?? null,
        });
      }
    });
  }
}

/** Why the edge happened: a failure's reason, or the autoscaler's. */
const reasonOf = (update: StatusUpdate) => update.failureReason ?? update.reason;
