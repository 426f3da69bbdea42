// What a reached budget refuses: while a budget that acts (action refuse or stop) is firing, the organization
// may not create deployments, and the deployments it covers may not grow or start (402 BUDGET_EXCEEDED,
// naming the budget). The evaluation workflow decides when a budget is reached; this only reads its state.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { BudgetExceededError } from '../core/errors.ts';
import { AlertRuleSchema } from './alert-rule.entity.ts';

export function createBudgetGuard() {
  return {
    /** `deploymentId`: the deployment growing; absent: a new deployment, which any of the organization's budgets covers. */
    async assertAllows(em: EntityManager, principal: Principal, what: { deploymentId?: string } = {}): Promise<void> {
      const reached = await em.findOne(AlertRuleSchema, {
        organization: principal.organizationId, metric: 'spend', action: { $in: ['refuse', 'stop'] }, state: 'firing', enabled: true, deletedAt: null,
        ...(what.deploymentId ? { $or: [{ deploymentId: null }, { deploymentId: what.deploymentId }] } : { deploymentId: null }),
      }, { orderBy: { createdAt: 'asc', id: 'asc' } });
      if (!reached) return;
      const spent = reached.lastValue === null || reached.lastValue === undefined ? null : Number(reached.lastValue);
      throw new BudgetExceededError(`Budget ${reached.name} (${reached.id}) is reached: ${spent ?? '?'} of ${Number(reached.threshold)} cents this ${reached.period}`, {
        budget: { id: reached.id, name: reached.name, limitCents: Number(reached.threshold), period: reached.period, basis: reached.basis, spentCents: spent },
      });
    },
  };
}

export type BudgetGuard = ReturnType<typeof createBudgetGuard>;
