// What optimization auto-apply reads and writes in PostgreSQL, for every organization at once (the worker is
// not held by row-level security): the running deployments whose policy has autoApply on and that auto-apply
// has not changed within the hour, and applying one recommendation to one of them as a desired-state change,
// written as a budget's stop is (workflows/alerts/store.ts stopCovered): the row's new scaling, a new
// generation (the API's desired-state redelivery sends it to the deployment's workflow), audited.
import { LockMode } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { replicaBoundsProblem } from '../../catalog/deployment-rules.ts';
import { AUTO_APPLY_COOLDOWN_SECONDS, type DeploymentShape, type OptimizationTargets, type Recommendation } from '../../catalog/optimization-rules.ts';
import { newId } from '../../lib/ids.ts';
import { AuditLogSchema } from '../../control-plane/audit/audit-log.entity.ts';
import { DeploymentSchema } from '../../control-plane/deployments/deployment.entity.ts';
import { OptimizationPolicySchema } from '../../control-plane/optimization/optimization-policy.entity.ts';

/** The audit record's user for what auto-apply does. */
export const SYSTEM_ACTOR = 'system:optimization';

/** A deployment auto-apply may change in this pass: as it was loaded (its generation tells a change meanwhile) and its policy's targets. */
export interface AutoApplyCandidate {
  readonly policyId: string;
  readonly organizationId: string;
  readonly deploymentId: string;
  readonly name: string;
  readonly generation: number;
  readonly deployment: DeploymentShape;
  readonly targets: OptimizationTargets;
}

/** Deployments a change by auto-apply may be made to: serving as asked, not stopped nor being deleted. */
const LIVE = { status: 'running', running: true, deleteRequested: false, deletedAt: null } as const;

export function optimizationStore(orm: MikroORM) {
  const cooledDown = (at: Date) => ({ $or: [{ autoAppliedAt: null }, { autoAppliedAt: { $lte: new Date(at.getTime() - AUTO_APPLY_COOLDOWN_SECONDS * 1000) } }] });

  return {
    async candidates(at: Date): Promise<AutoApplyCandidate[]> {
      const em = orm.em.fork();
      const policies = await em.find(OptimizationPolicySchema, { autoApply: true, ...cooledDown(at) });
      if (policies.length === 0) return [];
      const deployments = new Map((await em.find(DeploymentSchema, { id: { $in: policies.map((p) => p.deployment.id) }, ...LIVE })).map((d) => [d.id, d]));
      return policies.flatMap((policy) => {
        const d = deployments.get(policy.deployment.id);
        if (!d) return [];
        return [{
          policyId: policy.id, organizationId: d.organization.id, deploymentId: d.id, name: d.name, generation: d.generation,
          deployment: { gpu: d.gpu, gpusPerReplica: d.gpusPerReplica, replicas: d.replicas, minReplicas: d.minReplicas, maxReplicas: d.maxReplicas, contextLength: d.contextLength ?? null, dtype: d.dtype },
          targets: { targetP95TimeToFirstTokenMs: policy.targetP95TimeToFirstTokenMs ?? null, maxHourlyCents: policy.maxHourlyCents ?? null },
        }];
      });
    },

    /**
     * Applies the recommendation's change (replicas and bounds, as POST /v1/deployments/{id}/optimization
     * would), as a count the user set (replicaRequests raised: it replaces the autoscaler's), with a new
     * generation and an audit record, and notes when on the policy. False, changing nothing: the deployment or
     * its policy changed since they were loaded (left for the next pass), or auto-apply changed it within the hour.
     */
    async apply(candidate: AutoApplyCandidate, recommendation: Recommendation, at: Date): Promise<boolean> {
      return orm.em.fork().transactional(async (em) => {
        const policy = await em.findOne(OptimizationPolicySchema, { id: candidate.policyId, autoApply: true, ...cooledDown(at) }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!policy) return false;
        const deployment = await em.findOne(DeploymentSchema, { id: candidate.deploymentId, generation: candidate.generation, ...LIVE }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!deployment) return false;
        const { change } = recommendation;
        const from = { replicas: deployment.replicas, minReplicas: deployment.minReplicas, maxReplicas: deployment.maxReplicas };
        const to = { replicas: change.replicas ?? from.replicas, minReplicas: change.minReplicas ?? from.minReplicas, maxReplicas: change.maxReplicas ?? from.maxReplicas };
        // Capacity cuts only: nothing that adds replicas, whatever the recommendation.
        if (replicaBoundsProblem(to) || to.replicas > from.replicas) return false;
        Object.assign(deployment, { ...to, replicaRequests: deployment.replicaRequests + 1, generation: deployment.generation + 1 });
        em.create(AuditLogSchema, {
          id: newId('aud'), organizationId: candidate.organizationId, action: 'deployment.optimize', resourceType: 'deployment', resourceId: deployment.id,
          userId: SYSTEM_ACTOR, apiKeyId: null, ipAddress: '', statusCode: 200, createdAt: at,
          details: {
            reason: 'optimization policy auto-apply', recommendation: recommendation.id, summary: recommendation.summary, change: { ...change }, from,
            hourlyCentsChange: recommendation.effect.hourlyCentsChange, evidence: recommendation.evidence.figures,
          },
        });
        await em.flush();
        // Not through the entity: the policy's updatedAt says when a person last set it.
        await em.nativeUpdate(OptimizationPolicySchema, { id: policy.id }, { autoAppliedAt: at });
        return true;
      });
    },
  };
}

export type OptimizationStore = ReturnType<typeof optimizationStore>;
