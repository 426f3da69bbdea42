// Alert rules as data, and how one rule's state moves: ok -> pending (its condition holds, not yet for its
// `for` duration) -> firing (held long enough) -> ok again when it stops holding, which resolves the alert.
// The API validates and stores rules with these names; the evaluation workflow's activity (workflows/alerts/)
// and the benchmark step them. No I/O here.

/** What a rule watches. Metrics come from Prometheus, the deployment's state from PostgreSQL, spend from both. */
export const ALERT_METRICS = ['latency', 'time_to_first_token', 'error_rate', 'queue', 'replicas_at_max', 'deployment_failed', 'spend'] as const;
export type AlertMetric = (typeof ALERT_METRICS)[number];

/** Metrics that are a yes (1) or a no (0): their condition is "yes", with no threshold. */
export const YES_NO_METRICS: ReadonlySet<AlertMetric> = new Set(['replicas_at_max', 'deployment_failed']);

export const ALERT_QUANTILES = ['p50', 'p95', 'p99'] as const;
export const ALERT_COMPARISONS = ['above', 'below'] as const;
export const SPEND_PERIODS = ['day', 'month'] as const;
/** Spend so far in the period, or so far plus the rest of the period at the current hourly cost. */
export const SPEND_BASES = ['actual', 'forecast'] as const;
/**
 * What a firing rule does beyond recording an alert and notifying: `refuse` refuses new deployments and
 * scale-ups (402), `stop` also stops the deployments it covers. Only spend rules (budgets) act.
 */
export const ALERT_ACTIONS = ['notify', 'refuse', 'stop'] as const;

export const RULE_STATES = ['ok', 'pending', 'firing'] as const;
export type RuleState = (typeof RULE_STATES)[number];

export interface AlertRuleSpec {
  readonly id: string;
  readonly organizationId: string;
  readonly metric: AlertMetric;
  /** The deployment watched; null: every deployment of the organization (the worst one, or spend summed). */
  readonly deploymentName: string | null;
  /** Whether the rule names a deployment (one that no longer exists has no data). */
  readonly deploymentId: string | null;
  readonly quantile: (typeof ALERT_QUANTILES)[number];
  readonly comparison: (typeof ALERT_COMPARISONS)[number];
  /** Seconds for latencies, a ratio 0..1 for error_rate, requests for queue, cents for spend; unused by yes/no metrics. */
  readonly threshold: number;
  readonly forSeconds: number;
  readonly period: (typeof SPEND_PERIODS)[number];
  readonly basis: (typeof SPEND_BASES)[number];
}

export interface RuleProgress {
  readonly state: RuleState;
  /** When the condition started holding (pending and firing). */
  readonly since: Date | null;
}

export type Transition = 'fired' | 'resolved' | null;

/** Whether a measured value meets the rule's condition; no data (null) never does. */
export function conditionHolds(rule: Pick<AlertRuleSpec, 'metric' | 'comparison' | 'threshold'>, value: number | null): boolean {
  if (value === null || Number.isNaN(value)) return false;
  if (YES_NO_METRICS.has(rule.metric)) return value >= 1;
  // A budget is reached at its limit, not past it.
  if (rule.metric === 'spend') return value >= rule.threshold;
  return rule.comparison === 'above' ? value > rule.threshold : value < rule.threshold;
}

/** One evaluation of one rule: its next state, and whether that step fires or resolves an alert. */
export function stepRule(rule: Pick<AlertRuleSpec, 'metric' | 'comparison' | 'threshold' | 'forSeconds'>, current: RuleProgress, value: number | null, now: Date): RuleProgress & { transition: Transition } {
  if (!conditionHolds(rule, value)) {
    return { state: 'ok', since: null, transition: current.state === 'firing' ? 'resolved' : null };
  }
  if (current.state === 'firing') return { state: 'firing', since: current.since, transition: null };
  const since = current.state === 'pending' && current.since ? current.since : now;
  if (now.getTime() - since.getTime() >= rule.forSeconds * 1000) return { state: 'firing', since, transition: 'fired' };
  return { state: 'pending', since, transition: null };
}

/** What a firing says, in words: the rule, the value measured and the threshold it crossed. */
export function firingMessage(rule: Pick<AlertRuleSpec, 'metric' | 'comparison' | 'threshold' | 'forSeconds'> & { name: string }, value: number | null): string {
  const shown = value === null ? 'no data' : String(Math.round(value * 1000) / 1000);
  if (YES_NO_METRICS.has(rule.metric)) return `${rule.name}: ${rule.metric.replace(/_/g, ' ')}`;
  if (rule.metric === 'spend') return `${rule.name}: spend ${shown} cents reached the budget of ${rule.threshold} cents`;
  const held = rule.forSeconds ? ` for ${rule.forSeconds} s` : '';
  return `${rule.name}: ${rule.metric.replace(/_/g, ' ')} ${shown} ${rule.comparison} ${rule.threshold}${held}`;
}
