// Batched loading for one GraphQL request: every deployment a query lists asks for its events through one
// DataLoader, so `deployments { items { events { type } } }` reads the events of the whole page in one
// statement instead of one per deployment.
import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { DeploymentEventSchema } from '../deployments/deployment-event.entity.ts';
import type { DeploymentViewBody } from '../deployments/schemas.ts';
import type { DeploymentService } from '../deployments/service.ts';

/** As many as recovery's inspection shows for one deployment: the latest lifecycle edges. */
export const EVENTS_PER_DEPLOYMENT = 20;

export interface DeploymentEventView {
  id: string;
  deploymentId: string;
  type: string;
  generation: number;
  createdAt: string;
  /** The webhook payload of the spec (event, timestamp, data). */
  payload: Record<string, unknown>;
}

export interface Loaders {
  events: DataLoader<string, DeploymentEventView[]>;
  /** A deployment by id, read once per request however many events point at it. */
  deployment: DataLoader<string, DeploymentViewBody>;
}

/**
 * Built per request: a loader caches what it loaded, and that cache must never outlive the caller's request.
 */
export function createLoaders(em: EntityManager, principal: Principal, deployments: Pick<DeploymentService, 'get'>): Loaders {
  return {
    // The service's own read (its organization check and 404): a page's events share one deployment.
    deployment: new DataLoader((ids) => Promise.all(ids.map((id) => deployments.get(em.fork(), principal, id).catch((error: unknown) => error as Error)))),
    events: new DataLoader(async (deploymentIds) => {
      // The ids come from deployments the caller already read; the organization filter keeps it so even if one did not.
      const rows = await em.fork().find(
        DeploymentEventSchema,
        { deploymentId: { $in: [...deploymentIds] }, organizationId: principal.organizationId },
        { orderBy: { createdAt: 'desc', id: 'desc' } },
      );
      const byDeployment = new Map<string, DeploymentEventView[]>(deploymentIds.map((id) => [id, []]));
      for (const row of rows) {
        const list = byDeployment.get(row.deploymentId)!;
        if (list.length < EVENTS_PER_DEPLOYMENT) {
          list.push({ id: row.id, deploymentId: row.deploymentId, type: row.type, generation: row.generation, createdAt: row.createdAt.toISOString(), payload: row.payload });
        }
      }
      return deploymentIds.map((id) => byDeployment.get(id)!);
    }, { maxBatchSize: 100 }),
  };
}
