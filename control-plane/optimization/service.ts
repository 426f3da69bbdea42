// Optimization: a deployment's measured load over the last hour (Prometheus, lib/prometheus/optimization-load.ts),
// the recommendations the rules (catalog/optimization-rules.ts) draw from it under the
// deployment's policy, applying one as a desired-state change through the deployments service (its update,
// which the deployment's workflow receives), and the policy itself.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { DeploymentNotFoundError, invalidField } from '../core/errors.ts';
import type { CostService } from '../costs/service.ts';
import { DeploymentSchema, type Deployment } from '../deployments/deployment.entity.ts';
import type { UpdateDeploymentInput } from '../deployments/schemas.ts';
import type { DeploymentService } from '../deployments/service.ts';
import { recommend, type RecommendationKind } from '../../catalog/optimization-rules.ts';
import { newId } from '../../lib/ids.ts';
import type { PrometheusClient } from '../../lib/prometheus/client.ts';
import { measureOptimizationLoad } from '../../lib/prometheus/optimization-load.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { OptimizationPolicySchema, type OptimizationPolicy } from './optimization-policy.entity.ts';
import type { OptimizationPolicyInput } from './schemas.ts';

/** Statuses in which a deployment serves: the only ones whose load means anything. */
const SERVING = new Set(['running', 'scaling', 'updating']);

export interface OptimizationServiceDeps {
  prometheus: PrometheusClient;
  costs: Pick<CostService, 'alternatives'>;
  deployments: Pick<DeploymentService, 'update'>;
}

const policyView = (deploymentId: string, policy: OptimizationPolicy | null) => ({
  deploymentId,
  targetP95TimeToFirstTokenMs: policy?.targetP95TimeToFirstTokenMs ?? null,
  maxHourlyCents: policy?.maxHourlyCents ?? null,
  autoApply: policy?.autoApply ?? false,
  updatedAt: policy ? policy.updatedAt.toISOString() : null,
});

export function createOptimizationService(deps: OptimizationServiceDeps) {
  async function find(em: EntityManager, principal: Principal, id: string): Promise<Deployment> {
    const deployment = await em.findOne(DeploymentSchema, { id, organization: principal.organizationId, deletedAt: null });
    if (!deployment) throw new DeploymentNotFoundError(`Deployment ${id} not found`);
    return deployment;
  }

  async function policyOf(em: EntityManager, deployment: Deployment): Promise<OptimizationPolicy | null> {
    return em.findOne(OptimizationPolicySchema, { deployment: deployment.id });
  }

  async function recommendations(em: EntityManager, principal: Principal, deployment: Deployment) {
    const policy = await policyOf(em, deployment);
    const serving = SERVING.has(deployment.status) && deployment.running;
    const at = new Date();
    const load = serving ? await measureOptimizationLoad(deps.prometheus, namespaceOf(principal.organizationId), deployment.name, at) : null;
    const { facts, alternatives } = await deps.costs.alternatives(em, principal, deployment);
    const list = load ? recommend({
      deployment: { ...deployment, contextLength: deployment.contextLength ?? null },
      load,
      targets: { targetP95TimeToFirstTokenMs: policy?.targetP95TimeToFirstTokenMs ?? null, maxHourlyCents: policy?.maxHourlyCents ?? null },
      facts, alternatives,
    }) : [];
    return { policy, load, list, at };
  }

  return {
    /** GET /v1/deployments/{id}/optimization */
    async get(em: EntityManager, principal: Principal, id: string) {
      const deployment = await find(em, principal, id);
      const { policy, load, list, at } = await recommendations(em, principal, deployment);
      return {
        deploymentId: id, status: deployment.status, at: at.toISOString(),
        measured: load,
        policy: policyView(id, policy),
        recommendations: list,
      };
    },

    /** POST /v1/deployments/{id}/optimization: applies one of the current recommendations through the deployment's update. */
    async apply(em: EntityManager, principal: Principal, id: string, recommendation: RecommendationKind) {
      const deployment = await find(em, principal, id);
      const { list } = await recommendations(em, principal, deployment);
      const chosen = list.find((r) => r.id === recommendation);
      if (!chosen) {
        throw invalidField('recommendation', `${recommendation} is not among the deployment's recommendations now (${list.map((r) => r.id).join(', ') || 'none'})`);
      }
      const deploymentView = await deps.deployments.update(em, principal, id, chosen.change as UpdateDeploymentInput, false);
      return { applied: chosen, deployment: deploymentView };
    },

    /** PUT /v1/deployments/{id}/optimization: sets the policy; what the request leaves out keeps its value. */
    async setPolicy(em: EntityManager, principal: Principal, id: string, input: OptimizationPolicyInput) {
      const deployment = await find(em, principal, id);
      const policy = await policyOf(em, deployment) ?? em.create(OptimizationPolicySchema, {
        id: newId('opt'), organization: principal.organizationId, deployment: deployment.id, targetP95TimeToFirstTokenMs: null, maxHourlyCents: null, autoApply: false, autoAppliedAt: null,
      });
      if (input.targetP95TimeToFirstTokenMs !== undefined) policy.targetP95TimeToFirstTokenMs = input.targetP95TimeToFirstTokenMs;
      if (input.maxHourlyCents !== undefined) policy.maxHourlyCents = input.maxHourlyCents;
      if (input.autoApply !== undefined) policy.autoApply = input.autoApply;
      if (policy.autoApply && policy.targetP95TimeToFirstTokenMs === null && policy.maxHourlyCents === null) {
        throw invalidField('autoApply', 'needs a targetP95TimeToFirstTokenMs or a maxHourlyCents for applied recommendations to respect');
      }
      await em.flush();
      return policyView(id, policy);
    },
  };
}

export type OptimizationService = ReturnType<typeof createOptimizationService>;
