import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

/**
 * One closed metering interval of an organization: its usage in exact units (catalog/billing.ts) and the whole
 * cents drawn from the balance for it. Unique per (organization, startsAt): an interval is charged once, however
 * often the metering workflow or its activity runs.
 */
export const UsageIntervalSchema = defineEntity({
  name: 'UsageInterval',
  extends: BaseSchema,
  uniques: [{ properties: ['organizationId', 'startsAt'] }],
  properties: {
    organizationId: p.string(),
    startsAt: p.datetime(3),
    endsAt: p.datetime(3),
    usageUnits: p.bigint('number'),
    debitCents: p.integer(),
  },
});

export type UsageInterval = InferEntity<typeof UsageIntervalSchema>;
