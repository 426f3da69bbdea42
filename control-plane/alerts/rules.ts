// Alert rules and budgets of an organization: create, list, change, delete. A budget is a spend rule seen
// through /v1/cost-controls/alerts. The rule as asked is checked whole (a threshold its metric needs, fields
// only spend takes); the evaluation workflow (workflows/alerts/) moves its state.
import type { EntityManager } from '@mikro-orm/postgresql';
import { YES_NO_METRICS, conditionHolds } from '../../lib/alerts/rules.ts';
import { newId } from '../../lib/ids.ts';
import type { Principal } from '../auth/principal.ts';
import { DeploymentNotFoundError, NotFoundError, invalidField } from '../core/errors.ts';
import { DeploymentSchema } from '../deployments/deployment.entity.ts';
import { resolveOpenAlerts } from './alerts.ts';
import { AlertRuleSchema, type AlertRule } from './alert-rule.entity.ts';
import type { CreateAlertRuleInput, CreateBudgetInput, UpdateAlertRuleInput } from './schemas.ts';

/** The rule's fields as asked, before the checks that look at them together. */
type RuleFields = Pick<AlertRule, 'name' | 'metric' | 'deploymentId' | 'quantile' | 'comparison' | 'threshold' | 'forSeconds' | 'period' | 'basis' | 'action' | 'enabled'>;

const DEFAULTS = { quantile: 'p95', comparison: 'above', forSeconds: 0, period: 'month', basis: 'actual', action: 'notify', enabled: true } as const;

/** The cross-field rules a stored rule keeps (422 on the field to change). */
function assertCoherent(rule: RuleFields & { thresholdGiven: boolean }, asked: Partial<Record<'period' | 'basis' | 'quantile', unknown>>): void {
  const spend = rule.metric === 'spend';
  if (!YES_NO_METRICS.has(rule.metric) && !rule.thresholdGiven) throw invalidField('threshold', `required for metric ${rule.metric}`);
  if (rule.metric === 'error_rate' && rule.threshold > 1) throw invalidField('threshold', 'error_rate is a ratio from 0 to 1');
  if (spend && rule.comparison !== 'above') throw invalidField('comparison', 'a budget is reached at its limit: above only');
  // Every spend rule is listed as a budget, whose limit is whole cents from 1 (CreateBudgetRequest's limitCents).
  if (spend && (!Number.isInteger(rule.threshold) || rule.threshold < 1)) throw invalidField('threshold', 'a budget\'s limit is whole cents, at least 1');
  for (const field of ['period', 'basis'] as const) if (!spend && asked[field] !== undefined) throw invalidField(field, `only spend rules have a ${field}`);
  if (asked.quantile !== undefined && rule.metric !== 'latency' && rule.metric !== 'time_to_first_token') throw invalidField('quantile', 'only latency metrics have a quantile');
  if (!spend && rule.action !== 'notify') throw invalidField('action', 'only spend rules (budgets) refuse or stop deployments');
}

/** The names of the deployments the rules watch, in one query (deleted ones keep their name), so lists need no second call. */
async function watchedNames(em: EntityManager, rules: readonly AlertRule[]): Promise<ReadonlyMap<string, string>> {
  const ids = [...new Set(rules.map((r) => r.deploymentId).filter((id): id is string => !!id))];
  if (!ids.length) return new Map();
  const deployments = await em.find(DeploymentSchema, { id: { $in: ids } }, { fields: ['id', 'name'] });
  return new Map(deployments.map((d) => [d.id, d.name]));
}

const watchedDeployment = (r: AlertRule, names: ReadonlyMap<string, string>) =>
  (r.deploymentId ? { deploymentId: r.deploymentId, deploymentName: names.get(r.deploymentId) ?? r.deploymentId } : {});

export function ruleView(r: AlertRule, names: ReadonlyMap<string, string>) {
  const spend = r.metric === 'spend';
  return {
    id: r.id, name: r.name, metric: r.metric, ...watchedDeployment(r, names),
    threshold: YES_NO_METRICS.has(r.metric) ? null : Number(r.threshold), comparison: r.comparison,
    quantile: r.metric === 'latency' || r.metric === 'time_to_first_token' ? r.quantile : null, forSeconds: r.forSeconds,
    period: spend ? r.period : null, basis: spend ? r.basis : null, action: r.action, enabled: r.enabled, state: r.state,
    since: r.since?.toISOString() ?? null, lastValue: r.lastValue === null || r.lastValue === undefined ? null : Number(r.lastValue),
    evaluatedAt: r.evaluatedAt?.toISOString() ?? null, silencedUntil: r.silencedUntil?.toISOString() ?? null, createdAt: r.createdAt.toISOString(),
  };
}

export function budgetView(r: AlertRule, names: ReadonlyMap<string, string>) {
  return {
    id: r.id, name: r.name, limitCents: Number(r.threshold), period: r.period, basis: r.basis, ...watchedDeployment(r, names),
    action: r.action, enabled: r.enabled, state: r.state, spentCents: r.lastValue === null || r.lastValue === undefined ? null : Number(r.lastValue),
    evaluatedAt: r.evaluatedAt?.toISOString() ?? null, createdAt: r.createdAt.toISOString(),
  };
}

export function createAlertRuleService() {
  async function find(em: EntityManager, principal: Principal, id: string): Promise<AlertRule> {
    const rule = await em.findOne(AlertRuleSchema, { id, organization: principal.organizationId, deletedAt: null });
    if (!rule) throw new NotFoundError(`Alert rule ${id} not found`);
    return rule;
  }

  /** A deployment of another organization, or none, is not found (404): no existence leak. */
  async function assertDeployment(em: EntityManager, principal: Principal, deploymentId: string | null | undefined): Promise<void> {
    if (!deploymentId) return;
    const found = await em.count(DeploymentSchema, { id: deploymentId, organization: principal.organizationId, deletedAt: null });
    if (!found) throw new DeploymentNotFoundError(`Deployment ${deploymentId} not found`);
  }

  async function insert(em: EntityManager, principal: Principal, fields: RuleFields, asked: Record<string, unknown>, thresholdGiven: boolean): Promise<AlertRule> {
    assertCoherent({ ...fields, thresholdGiven }, asked);
    await assertDeployment(em, principal, fields.deploymentId);
    const rule = em.create(AlertRuleSchema, {
      id: newId('alr'), organization: principal.organizationId, ...fields, state: 'ok', since: null, lastValue: null, evaluatedAt: null,
      firings: 0, silencedUntil: null, deletedAt: null,
    });
    await em.flush();
    return rule;
  }

  return {
    async create(em: EntityManager, principal: Principal, input: CreateAlertRuleInput) {
      const fields: RuleFields = { ...DEFAULTS, ...definedOnly(input), deploymentId: input.deploymentId ?? null, threshold: input.threshold ?? 0, name: input.name, metric: input.metric };
      const rule = await insert(em, principal, fields, input, input.threshold !== undefined);
      return ruleView(rule, await watchedNames(em, [rule]));
    },

    async createBudget(em: EntityManager, principal: Principal, input: CreateBudgetInput) {
      const { limitCents, ...rest } = input;
      const fields: RuleFields = { ...DEFAULTS, action: 'refuse', ...definedOnly(rest), name: input.name, deploymentId: input.deploymentId ?? null, metric: 'spend', threshold: limitCents };
      const rule = await insert(em, principal, fields, {}, true);
      return budgetView(rule, await watchedNames(em, [rule]));
    },

    async list(em: EntityManager, principal: Principal) {
      const rules = await em.find(AlertRuleSchema, { organization: principal.organizationId, deletedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
      const names = await watchedNames(em, rules);
      return rules.map((r) => ruleView(r, names));
    },

    async listBudgets(em: EntityManager, principal: Principal) {
      const rules = await em.find(AlertRuleSchema, { organization: principal.organizationId, metric: 'spend', deletedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
      const names = await watchedNames(em, rules);
      return rules.map((r) => budgetView(r, names));
    },

    async update(em: EntityManager, principal: Principal, id: string, input: UpdateAlertRuleInput) {
      const rule = await find(em, principal, id);
      const next: RuleFields = {
        name: rule.name, metric: rule.metric, deploymentId: rule.deploymentId ?? null, quantile: rule.quantile, comparison: rule.comparison,
        threshold: Number(rule.threshold), forSeconds: rule.forSeconds, period: rule.period, basis: rule.basis, action: rule.action, enabled: rule.enabled,
        ...definedOnly(input),
      };
      if (input.deploymentId === null) next.deploymentId = null;
      const kept = next.metric === rule.metric;
      assertCoherent({ ...next, thresholdGiven: input.threshold !== undefined || kept }, input);
      if (input.deploymentId) await assertDeployment(em, principal, input.deploymentId);
      const changed = (fields: readonly (keyof RuleFields)[]) => fields.some((f) => next[f] !== (f === 'threshold' ? Number(rule.threshold) : rule[f] ?? null));
      const measured = changed(['metric', 'deploymentId', 'quantile', 'period', 'basis']);
      // A budget's spend does not depend on its limit: with only the limit changed, the spend last measured
      // says now whether it is still reached. Still reached, it stays firing (the budget guard keeps refusing,
      // no second alert); raised past the spend, it starts over below, so deployments are allowed at once.
      const stillReached = next.metric === 'spend' && !measured && rule.state === 'firing' && next.enabled
        && conditionHolds(next, rule.lastValue ?? null);
      // Otherwise, what it watches changed: it starts over from ok (an alert it had open is resolved).
      const watched = measured || changed(['comparison', 'threshold']);
      Object.assign(rule, next);
      if ((watched && !stillReached) || !next.enabled) await restart(em, rule);
      await em.flush();
      return ruleView(rule, await watchedNames(em, [rule]));
    },

    async remove(em: EntityManager, principal: Principal, id: string) {
      const rule = await find(em, principal, id);
      rule.deletedAt = new Date();
      await restart(em, rule);
      await em.flush();
      return { id, deleted: true as const };
    },
  };
}

/** Back to ok: an alert the rule has open is resolved (its resolution recorded once). */
async function restart(em: EntityManager, rule: AlertRule): Promise<void> {
  if (rule.state === 'firing') await resolveOpenAlerts(em, rule.organization.id, rule.id, new Date());
  Object.assign(rule, { state: 'ok', since: null });
}

function definedOnly<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export type AlertRuleService = ReturnType<typeof createAlertRuleService>;
