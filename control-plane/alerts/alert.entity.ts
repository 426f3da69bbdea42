import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

/**
 * One firing of a rule, from firing to resolved, or an alert raised by hand (POST /v1/monitoring/alerts,
 * no rule). Unique per (rule, sequence): a retried evaluation cannot record a firing twice.
 */
export const AlertSchema = defineEntity({
  name: 'Alert',
  extends: BaseSchema,
  uniques: [{ properties: ['ruleId', 'sequence'] }],
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    organizationId: p.string(),
    ruleId: p.string().nullable(),
    sequence: p.integer(),
    name: p.string(),
    metric: p.string(),
    message: p.text(),
    state: p.string().$type<'firing' | 'resolved'>(),
    value: p.double().$type<number>().runtimeType('number').nullable(),
    threshold: p.double().$type<number>().runtimeType('number').nullable(),
    /** When the condition began to hold (before the rule's `for` duration). */
    startedAt: p.datetime(3),
    firedAt: p.datetime(3),
    resolvedAt: p.datetime(3).nullable(),
    acknowledgedAt: p.datetime(3).nullable(),
    acknowledgedBy: p.string().nullable(),
    silencedUntil: p.datetime(3).nullable(),
  },
});

export type Alert = InferEntity<typeof AlertSchema>;
