// Answer shape of GET /v1/deployments/{id}/pricing.
import { z } from 'zod';
import { orgIdQuery } from '../core/organization-query.ts';

export const PricingQuery = z.strictObject({ ...orgIdQuery });

const cents = z.number().int();

export const DeploymentPricing = z.object({
  deploymentId: z.string(),
  gpu: z.string(),
  gpusPerReplica: z.number().int(),
  replicas: z.number().int().meta({ description: 'Replicas running and charged now, as the deployment\'s workflow last recorded them (the autoscaler\'s choice, not the count asked for): none while deploying, stopped or failed.' }),
  hourlyCents: cents.meta({ description: 'What it costs per hour now: GPU price x GPUs per replica x those replicas; the hourly rate billing projects with.' }),
  month: z.object({
    start: z.iso.datetime(),
    replicaHours: z.number().meta({ description: 'Replica-hours served this month, measured: Prometheus\'s record of its ready replicas, every 15 s.' }),
    spentCents: cents,
    projectedCents: cents.meta({ description: 'Spent so far plus the rest of the month at today\'s hourly cost.' }),
  }),
  throughput: z.object({
    windowSeconds: z.number().int().meta({ description: 'The window the figures below are measured over: the last hour.' }),
    generationTokens: z.number().int().meta({ description: 'Tokens its replicas generated in the window, as Prometheus scraped them.' }),
    generationTokensPerSecond: z.number().nullable().meta({ description: 'Average over the window; null without traffic.' }),
    minimumTokens: z.number().int().meta({ description: 'The fewest tokens in the window that give a cost per million tokens.' }),
    costPerMillionTokensCents: z.number().nullable().meta({ description: 'What its replicas cost in the window (measured replica-hours) over the tokens they generated in it, per million; null below minimumTokens.' }),
    note: z.string().nullable().meta({ description: 'Why costPerMillionTokensCents is null: not enough traffic yet.' }),
  }),
  alternatives: z.array(z.object({
    gpu: z.string(),
    fits: z.boolean().meta({ description: 'Whether the model fits on this GPU type (the fit rules).' }),
    available: z.boolean().meta({ description: 'Whether a serving GPU cluster you may use offers this GPU type now: one that does not cannot be moved to.' }),
    gpusPerReplica: z.number().int().nullable(),
    hourlyCents: cents.nullable(),
    savingCents: cents.nullable().meta({ description: 'Per hour against now; negative: it costs more.' }),
    reason: z.string(),
  })).meta({ description: 'The same deployment on every other GPU type: what it would need and cost.' }),
}).meta({ id: 'DeploymentPricing' });
