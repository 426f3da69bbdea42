// What alert evaluation reads and writes in PostgreSQL, for every organization at once (the worker is not held
// by row-level security): the rules and the live deployments they watch; the rules' states, in one statement
// per pass; a firing or a resolution with its event, once (a rule changed by the API meanwhile is left for
// the next pass); budgets' stops; and the events whose deliveries are still to start.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { alertPayload, type AlertEventType } from '../../lib/alerts/events.ts';
import type { DeploymentFacts } from '../../lib/alerts/measure.ts';
import { firingMessage, type AlertRuleSpec, type RuleProgress } from '../../lib/alerts/rules.ts';
import { newId } from '../../lib/ids.ts';
import { AlertEventSchema, type AlertEvent } from '../../control-plane/alerts/alert-event.entity.ts';
import { AlertRuleSchema, type AlertRule } from '../../control-plane/alerts/alert-rule.entity.ts';
import { AlertSchema, type Alert } from '../../control-plane/alerts/alert.entity.ts';
import { DeploymentSchema } from '../../control-plane/deployments/deployment.entity.ts';
import { stopRunningDeployments } from '../deployment/system-stop.ts';
import { notifyMembers, OWNERS_AND_ADMINS } from '../notifications.ts';

/** A rule as loaded for a pass: what it watches, where it was, and what tells a change by the API meanwhile. */
export interface LoadedRule extends AlertRuleSpec, RuleProgress {
  readonly name: string;
  readonly action: AlertRule['action'];
  readonly updatedAt: Date;
}

export interface RuleOutcome extends RuleProgress {
  readonly rule: LoadedRule;
  readonly value: number | null;
}

/** The audit record's user for what Kiln does on its own (a budget stopping deployments). */
export const SYSTEM_ACTOR = 'system:alerts';

async function recordEvent(em: EntityManager, alert: Alert, type: AlertEventType, at: Date): Promise<void> {
  await em.upsert(AlertEventSchema, {
    id: newId('ale'), organizationId: alert.organizationId, alertId: alert.id, type, dispatchedAt: null, createdAt: at,
    payload: alertPayload(type, { ...alert, ruleId: alert.ruleId ?? null, value: alert.value ?? null, threshold: alert.threshold ?? null, resolvedAt: alert.resolvedAt ?? null }, at),
  }, { onConflictAction: 'ignore', onConflictFields: ['alertId', 'type'], disableIdentityMap: true });
  // Its in-app notification, in the same transaction; the callers record each event once (the rule's locked state).
  const kind = type === 'alert.firing' ? 'alert.fired' : 'alert.resolved';
  await notifyMembers(em, alert.organizationId, OWNERS_AND_ADMINS, kind, {
    message: kind === 'alert.fired' ? alert.message : `Alert ${alert.name} resolved: ${alert.message}`,
    alertId: alert.id, name: alert.name, metric: alert.metric, value: alert.value ?? null, threshold: alert.threshold ?? null,
  });
}

export function alertStore(orm: MikroORM) {
  /** The rule under its row lock, unless the API changed it since it was loaded (or it fired or resolved meanwhile). */
  const locked = (em: EntityManager, rule: LoadedRule) =>
    em.findOne(AlertRuleSchema, { id: rule.id, updatedAt: rule.updatedAt, state: rule.state, enabled: true, deletedAt: null }, { lockMode: LockMode.PESSIMISTIC_WRITE });

  return {
    async load(): Promise<{ rules: LoadedRule[]; deployments: DeploymentFacts[] }> {
      const em = orm.em.fork();
      const rows = await em.find(AlertRuleSchema, { enabled: true, deletedAt: null });
      const organizations = [...new Set(rows.map((r) => r.organization.id))];
      const deployments = organizations.length === 0 ? [] : await em.find(DeploymentSchema, { organization: { $in: organizations }, deletedAt: null }, {
        fields: ['id', 'organization', 'name', 'status', 'gpu', 'gpusPerReplica', 'replicas', 'currentReplicas', 'maxReplicas'],
      });
      const nameOf = new Map(deployments.map((d) => [d.id, d.name]));
      return {
        rules: rows.map((r) => ({
          id: r.id, organizationId: r.organization.id, name: r.name, metric: r.metric, deploymentId: r.deploymentId ?? null,
          deploymentName: r.deploymentId ? nameOf.get(r.deploymentId) ?? null : null, quantile: r.quantile, comparison: r.comparison,
          threshold: Number(r.threshold), forSeconds: r.forSeconds, period: r.period, basis: r.basis, action: r.action,
          state: r.state, since: r.since ?? null, updatedAt: r.updatedAt,
        })),
        deployments: deployments.map((d) => ({
          organizationId: d.organization.id, name: d.name, status: d.status, gpu: d.gpu, gpusPerReplica: d.gpusPerReplica,
          replicas: d.replicas, currentReplicas: d.currentReplicas, maxReplicas: d.maxReplicas,
        })),
      };
    },

    /** Every rule's state and value of this pass, in one statement; a rule the API changed meanwhile keeps its row. */
    async saveStates(outcomes: readonly RuleOutcome[], at: Date): Promise<void> {
      if (outcomes.length === 0) return;
      const rows = outcomes.map((o) => ({ id: o.rule.id, state: o.state, since: o.since?.toISOString() ?? null, value: o.value, updated_at: o.rule.updatedAt.toISOString() }));
      await orm.em.fork().getConnection().execute(
        `update alert_rule r set state = v.state, since = v.since, last_value = v.value, evaluated_at = ?
         from jsonb_to_recordset(?::jsonb) as v(id text, state text, since timestamptz, value float8, updated_at timestamptz)
         where r.id = v.id and r.updated_at = v.updated_at`,
        [at.toISOString(), JSON.stringify(rows)],
      );
    },

    /** The rule fires: its next alert (sequence = firings) and the alert.firing event, once. False: the rule changed meanwhile. */
    async fire(outcome: RuleOutcome, at: Date): Promise<boolean> {
      return orm.em.fork().transactional(async (em) => {
        const rule = await locked(em, outcome.rule);
        if (!rule) return false;
        Object.assign(rule, { firings: rule.firings + 1, state: 'firing', since: outcome.since, lastValue: outcome.value, evaluatedAt: at });
        const alert = em.create(AlertSchema, {
          id: newId('alt'), organizationId: outcome.rule.organizationId, ruleId: rule.id, sequence: rule.firings, name: rule.name, metric: rule.metric,
          message: firingMessage(outcome.rule, outcome.value), state: 'firing', value: outcome.value, threshold: Number(rule.threshold),
          startedAt: outcome.since ?? at, firedAt: at, resolvedAt: null, acknowledgedAt: null, acknowledgedBy: null, silencedUntil: rule.silencedUntil ?? null,
        });
        await em.flush();
        await recordEvent(em, alert, 'alert.firing', at);
        return true;
      });
    },

    /** The rule stops holding: its open alert resolves, with the alert.resolved event, once. */
    async resolve(outcome: RuleOutcome, at: Date): Promise<boolean> {
      return orm.em.fork().transactional(async (em) => {
        const rule = await locked(em, outcome.rule);
        if (!rule) return false;
        Object.assign(rule, { state: 'ok', since: null, lastValue: outcome.value, evaluatedAt: at });
        for (const alert of await em.find(AlertSchema, { ruleId: rule.id, state: 'firing' })) {
          Object.assign(alert, { state: 'resolved', resolvedAt: at });
          await recordEvent(em, alert, 'alert.resolved', at);
        }
        await em.flush();
        return true;
      });
    },

    /**
     * A reached budget with action `stop`: the deployments it covers that still run are stopped
     * (workflows/deployment/system-stop.ts). Answers how many it stopped; none once they all are.
     */
    async stopCovered(rule: LoadedRule, at: Date): Promise<number> {
      return orm.em.fork().transactional((em) => stopRunningDeployments(em, {
        organizationId: rule.organizationId, deploymentId: rule.deploymentId, actor: SYSTEM_ACTOR, at,
        details: { reason: 'budget reached', budget: { id: rule.id, name: rule.name, limitCents: rule.threshold, period: rule.period } },
      }));
    },

    /** Events whose deliveries have not been started, oldest first; `silenced`: their alert or rule is silenced at `at`. */
    async undispatched(limit: number, at: Date): Promise<Array<{ event: AlertEvent; silenced: boolean }>> {
      const em = orm.em.fork();
      const events = await em.find(AlertEventSchema, { dispatchedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' }, limit });
      const alerts = new Map((await em.find(AlertSchema, { id: { $in: events.map((e) => e.alertId) } })).map((a) => [a.id, a]));
      const ruleIds = [...alerts.values()].map((a) => a.ruleId).filter((id): id is string => !!id);
      const rules = new Map((ruleIds.length ? await em.find(AlertRuleSchema, { id: { $in: ruleIds } }) : []).map((r) => [r.id, r]));
      return events.map((event) => {
        const alert = alerts.get(event.alertId);
        const until = [alert?.silencedUntil, alert?.ruleId ? rules.get(alert.ruleId)?.silencedUntil : null].filter((d): d is Date => !!d);
        return { event, silenced: until.some((d) => d > at) };
      });
    },

    async markDispatched(ids: readonly string[], at: Date): Promise<void> {
      if (ids.length) await orm.em.fork().nativeUpdate(AlertEventSchema, { id: { $in: [...ids] } }, { dispatchedAt: at });
    },
  };
}

export type AlertStore = ReturnType<typeof alertStore>;
