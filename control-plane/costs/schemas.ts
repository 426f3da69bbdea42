// Answer shape of GET /v1/deployments/{id}/pricing.
import { z } from 'zod';
import { orgIdQuery } from '../core/organization-query.ts';

export const PricingQuery = z.strictObject({ ...orgIdQuery });

const cents = z.number().int();

export const DeploymentPricing = z.object({
  deploymentId: z.string(),
  gpu: z.string(),
  gpusPerReplica: z.number().int(),
  replicas: z.number().int().meta({ description: 'Replicas it holds now: none while stopped.' }),
  hourlyCents: cents.meta({ description: 'What it costs per hour now: GPU price x GPUs per replica x replicas.' }),
  month: z.object({
    start: z.iso.datetime(),
    replicaHours: z.number().meta({ description: 'Replica-hours served this month, measured: Prometheus\'s record of its ready replicas, every 15 s.' }),
    spentCents: cents,
    projectedCents: cents.meta({ description: 'Spent so far plus the rest of the month at today\'s hourly cost.' }),
  }),
  throughput: z.object({
    generationTokensPerSecond: z.number().nullable().meta({ description: 'Average over the last hour; null without traffic.' }),
    costPerMillionTokensCents: z.number().nullable().meta({ description: 'The hourly cost over the tokens an hour at that rate.' }),
  }),
  alternatives: z.array(z.object({
    gpu: z.string(),
    fits: z.boolean(),
    gpusPerReplica: z.number().int().nullable(),
    hourlyCents: cents.nullable(),
    savingCents: cents.nullable().meta({ description: 'Per hour against now; negative: it costs more.' }),
    reason: z.string(),
  })).meta({ description: 'The same deployment on every other GPU type: what it would need and cost.' }),
}).meta({ id: 'DeploymentPricing' });
