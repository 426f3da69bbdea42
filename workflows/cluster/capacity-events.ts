// The events of a capacity decision about a `local` cluster's node pool, written in the transaction that commits
// the pool's new size: the cluster's (`cluster.pool_grown`, `cluster.pool_shrunk`), for platform administrators,
// and, for a growth, the deployment's (`deployment.capacity_requested`), for its organization. Their webhooks are
// started after the commit (webhooks/store.ts), on every retry too: the deliveries' workflow ids keep them single.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { newId } from '../../lib/ids.ts';
import type { ClusterWebhookPayload, DeploymentWebhookPayload } from '../../lib/webhook-payloads.ts';
import { ClusterEventSchema } from '../../control-plane/clusters/cluster-event.entity.ts';
import type { GpuClusterRecord } from '../../control-plane/clusters/gpu-cluster.entity.ts';
import { DeploymentEventSchema } from '../../control-plane/deployments/deployment-event.entity.ts';
import type { DeploymentSchema } from '../../control-plane/deployments/deployment.entity.ts';
import type { InferEntity } from '@mikro-orm/core';
import { webhookDeliveries } from '../webhooks/store.ts';

export type ClusterEventType = ClusterWebhookPayload['event'] & ('cluster.pool_grown' | 'cluster.pool_shrunk');

export interface PoolDecision {
  readonly type: 'cluster.pool_grown' | 'cluster.pool_shrunk';
  readonly requestId: string;
  readonly pool: string;
  readonly gpuType: string;
  readonly previousSize: number;
  readonly size: number;
  readonly nodes: readonly string[];
  readonly reason: string;
  /** The deployment a growth is for: it gets a `deployment.capacity_requested` of its own. */
  readonly deployment?: InferEntity<typeof DeploymentSchema>;
}

/** Records the decision's events in `em`'s transaction; answers their ids, for capacityEventDeliveries. */
export async function recordPoolDecision(em: EntityManager, cluster: GpuClusterRecord, decision: PoolDecision): Promise<string[]> {
  const timestamp = new Date().toISOString();
  const { deployment } = decision;
  const clusterPayload: ClusterWebhookPayload = {
    event: decision.type, timestamp,
    data: {
      id: cluster.id, name: cluster.name, pool: decision.pool, gpuType: decision.gpuType, previousSize: decision.previousSize, size: decision.size,
      nodes: [...decision.nodes], deploymentId: deployment?.id ?? null, reason: decision.reason,
    },
  };
  const clusterEventId = newId('cev');
  em.create(ClusterEventSchema, {
    id: clusterEventId, clusterId: cluster.id, type: decision.type, requestId: decision.requestId, deploymentId: deployment?.id ?? null,
    payload: clusterPayload, createdAt: new Date(),
  });
  if (!deployment) return [clusterEventId];
  const type = 'deployment.capacity_requested';
  // Each growth for the deployment within one generation is an event of its own (the cluster's lock orders them).
  const sequence = await em.count(DeploymentEventSchema, { deploymentId: deployment.id, type, generation: deployment.generation });
  const payload: DeploymentWebhookPayload = {
    event: type, timestamp,
    data: {
      id: deployment.id, name: deployment.name, status: deployment.status, endpoint: deployment.endpoint, gpu: deployment.gpu,
      replicas: deployment.currentReplicas, reason: decision.reason,
    },
  };
  const deploymentEventId = newId('evt');
  em.create(DeploymentEventSchema, {
    id: deploymentEventId, deploymentId: deployment.id, organizationId: deployment.organization.id, type, generation: deployment.generation, sequence, payload, createdAt: new Date(),
  });
  return [clusterEventId, deploymentEventId];
}

/** Starts the webhooks of recorded decision events: a cluster's to the platform's subscribers, a deployment's to its organization's. */
export function capacityEventDeliveries(orm: MikroORM, client: Client) {
  const deliveries = webhookDeliveries(orm, client);
  return async (eventIds: readonly string[]): Promise<void> => {
    const em = orm.em.fork();
    for (const id of eventIds) {
      if (id.startsWith('cev_')) {
        const event = await em.findOneOrFail(ClusterEventSchema, { id });
        await deliveries.startFor({ id, type: event.type, organizationId: null });
      } else {
        const event = await em.findOneOrFail(DeploymentEventSchema, { id });
        await deliveries.startFor(event);
      }
    }
  };
}
