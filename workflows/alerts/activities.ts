// One pass of alert evaluation, for every organization: load the rules and the deployments they watch,
// measure each rule's value (lib/alerts/measure.ts: one Prometheus query per organization and figure), step
// each rule's state (lib/alerts/rules.ts), record firings and resolutions once, stop what reached `stop`
// budgets cover, and start the webhook deliveries of the events not dispatched yet.
import type { AlertEvaluationResult } from '../contract/alerts.ts';
import { measureRules, type DeploymentFacts } from '../../lib/alerts/measure.ts';
import { stepRule } from '../../lib/alerts/rules.ts';
import type { PrometheusClient } from '../../lib/prometheus/client.ts';
import type { EventDeliveries } from '../deployment/status-store.ts';
import type { AlertStore, LoadedRule, RuleOutcome } from './store.ts';

export interface AlertActivityDeps {
  readonly store: AlertStore;
  readonly prometheus: PrometheusClient;
  /** Starts an event's webhook deliveries (workflows/webhooks/store.ts webhookDeliveries). */
  readonly deliveries: EventDeliveries;
  readonly namespaceOf: (organizationId: string) => string;
  /** Rates and quantiles over this window, seconds. */
  readonly windowSeconds: number;
  readonly now?: () => Date;
}

/** Events handed to the deliveries per pass; more wait for the next. */
const DISPATCH_BATCH = 500;

/**
 * Each rule's value and next state at `now`, without I/O beyond Prometheus: what a pass and the benchmark
 * (bench/observability-alerts.ts) both run.
 */
export async function evaluateRules(rules: readonly LoadedRule[], deployments: readonly DeploymentFacts[], context: {
  prometheus: PrometheusClient; namespaceOf: (organizationId: string) => string; windowSeconds: number; now: Date;
}): Promise<Array<RuleOutcome & { transition: 'fired' | 'resolved' | null }>> {
  const values = await measureRules(rules, { ...context, deployments });
  return rules.map((rule) => {
    const value = values.get(rule.id) ?? null;
    return { rule, value, ...stepRule(rule, rule, value, context.now) };
  });
}

export function createAlertActivities(deps: AlertActivityDeps) {
  const now = deps.now ?? (() => new Date());
  return {
    async evaluateAlertRules(): Promise<AlertEvaluationResult> {
      const started = Date.now();
      const at = now();
      const { rules, deployments } = await deps.store.load();
      const outcomes = await evaluateRules(rules, deployments, { prometheus: deps.prometheus, namespaceOf: deps.namespaceOf, windowSeconds: deps.windowSeconds, now: at });
      await deps.store.saveStates(outcomes.filter((o) => !o.transition), at);
      let fired = 0;
      let resolved = 0;
      let stopped = 0;
      for (const outcome of outcomes) {
        if (outcome.transition === 'fired' && await deps.store.fire(outcome, at)) fired += 1;
        if (outcome.transition === 'resolved' && await deps.store.resolve(outcome, at)) resolved += 1;
        // Every pass while reached: a deployment started meanwhile (by whoever could) is stopped too.
        if (outcome.state === 'firing' && outcome.rule.metric === 'spend' && outcome.rule.action === 'stop') stopped += await deps.store.stopCovered(outcome.rule, at);
      }
      const pending = await deps.store.undispatched(DISPATCH_BATCH, at);
      for (const { event, silenced } of pending) {
        if (!silenced) await deps.deliveries.startFor(event);
      }
      await deps.store.markDispatched(pending.map((p) => p.event.id), at);
      return { rules: rules.length, fired, resolved, stopped, dispatched: pending.length, evaluationMs: Date.now() - started };
    },
  };
}

export type AlertActivities = ReturnType<typeof createAlertActivities>;
