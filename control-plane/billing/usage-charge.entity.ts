import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';

/** What one deployment's GPUs of one type used in one closed interval: GPU-milliseconds at the type's hourly rate. Invoices add these up. */
export const UsageChargeSchema = defineEntity({
  name: 'UsageCharge',
  extends: BaseSchema,
  indexes: [{ properties: ['organizationId', 'startsAt'] }],
  properties: {
    organizationId: p.string(),
    intervalId: p.string(),
    /** The interval's start: invoices and the usage route select a period's charges by it. */
    startsAt: p.datetime(3),
    deploymentId: p.string(),
    deploymentName: p.string(),
    gpu: p.string(),
    gpuMs: p.bigint('number'),
    rateCentsPerHour: p.integer(),
    /** gpuMs x rateCentsPerHour: exact usage units (catalog/billing.ts USAGE_UNITS_PER_CENT make a cent). */
    usageUnits: p.bigint('number'),
  },
});

export type UsageCharge = InferEntity<typeof UsageChargeSchema>;
