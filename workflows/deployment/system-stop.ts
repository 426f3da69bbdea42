// Kiln stopping an organization's deployments on its own (a budget reached, credits run out): each still running
// is stopped as the API's `stop` does it (running false, a new generation, which the API's desired-state
// delivery sends to its workflow, which records `stopped` and fires `deployment.stopped`), with an audit record
// naming why. Runs in the caller's transaction; answers how many it stopped (none once all are).
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../lib/ids.ts';
import { AuditLogSchema } from '../../control-plane/audit/audit-log.entity.ts';
import { DeploymentSchema } from '../../control-plane/deployments/deployment.entity.ts';

export interface SystemStop {
  readonly organizationId: string;
  /** One deployment only; all of the organization's when absent. */
  readonly deploymentId?: string | null;
  /** The audit record's user: what acted (`system:alerts`, `system:billing`). */
  readonly actor: string;
  /** Why, in the audit record's details. */
  readonly details: Record<string, unknown>;
  readonly at: Date;
}

export async function stopRunningDeployments(em: EntityManager, stop: SystemStop): Promise<number> {
  const running = await em.find(DeploymentSchema, {
    organization: stop.organizationId, running: true, deleteRequested: false, deletedAt: null, ...(stop.deploymentId ? { id: stop.deploymentId } : {}),
  }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  for (const deployment of running) {
    Object.assign(deployment, { running: false, generation: deployment.generation + 1 });
    em.create(AuditLogSchema, {
      id: newId('aud'), organizationId: stop.organizationId, action: 'deployment.stop', resourceType: 'deployment', resourceId: deployment.id,
      userId: stop.actor, apiKeyId: null, ipAddress: '', statusCode: 200, createdAt: stop.at, details: stop.details,
    });
  }
  await em.flush();
  return running.length;
}
