import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { DeploymentSchema } from '../deployments/deployment.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

/**
 * A deployment's optimization policy (PUT /v1/deployments/{id}/optimization): the targets its recommendations
 * respect and whether they may be applied without asking. One row per deployment; none means no targets.
 */
export const OptimizationPolicySchema = defineEntity({
  name: 'OptimizationPolicy',
  extends: BaseSchema,
  uniques: [{ properties: ['deployment'] }],
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    deployment: () => p.manyToOne(DeploymentSchema).ref(),
    /** p95 time to first token the deployment should keep under, ms; null: none. */
    targetP95TimeToFirstTokenMs: p.integer().nullable().fieldName('target_p95_ttft_ms'),
    /** The most the deployment may cost per hour, US cents; null: none. */
    maxHourlyCents: p.integer().nullable(),
    /** Whether Kiln applies its cost-saving capacity recommendations on its own (catalog/optimization-rules.ts AUTO_APPLY_KINDS). */
    autoApply: p.boolean().default(false),
    /** When auto-apply last changed the deployment (workflows/optimization/): at most one change per AUTO_APPLY_COOLDOWN_SECONDS. */
    autoAppliedAt: p.datetime(3).nullable(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type OptimizationPolicy = InferEntity<typeof OptimizationPolicySchema>;
