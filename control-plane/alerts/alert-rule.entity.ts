import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import type { ALERT_ACTIONS, ALERT_COMPARISONS, ALERT_QUANTILES, AlertMetric, RuleState, SPEND_BASES, SPEND_PERIODS } from '../../lib/alerts/rules.ts';
import { BaseSchema } from '../database/base.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';

/**
 * An alert rule of an organization (lib/alerts/rules.ts): what it watches and when it fires, and where the
 * evaluation workflow left it (state, since when, the last value). A spend rule is a budget
 * (/v1/cost-controls/alerts), and its `action` may refuse or stop deployments.
 */
export const AlertRuleSchema = defineEntity({
  name: 'AlertRule',
  extends: BaseSchema,
  indexes: [{ properties: ['organization', 'createdAt'] }],
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    name: p.string(),
    metric: p.string().$type<AlertMetric>(),
    /** The deployment watched (plain id: the rule outlives it, with no data); null: the whole organization. */
    deploymentId: p.string().nullable(),
    quantile: p.string().$type<(typeof ALERT_QUANTILES)[number]>(),
    comparison: p.string().$type<(typeof ALERT_COMPARISONS)[number]>(),
    threshold: p.double().$type<number>().runtimeType('number'),
    forSeconds: p.integer(),
    period: p.string().$type<(typeof SPEND_PERIODS)[number]>(),
    basis: p.string().$type<(typeof SPEND_BASES)[number]>(),
    action: p.string().$type<(typeof ALERT_ACTIONS)[number]>(),
    enabled: p.boolean(),
    state: p.string().$type<RuleState>(),
    /** When its condition began to hold (pending, firing). */
    since: p.datetime(3).nullable(),
    lastValue: p.double().$type<number>().runtimeType('number').nullable(),
    evaluatedAt: p.datetime(3).nullable(),
    /** Alerts it has fired: the sequence number of the next alert's predecessor. */
    firings: p.integer(),
    /** Its alerts notify nobody until then. */
    silencedUntil: p.datetime(3).nullable(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
    deletedAt: p.datetime(3).nullable(),
  },
});

export type AlertRule = InferEntity<typeof AlertRuleSchema>;
