// Payloads of GET /v1/credits and GET /api/billing/usage.
import { z } from 'zod';
import { orgIdQuery } from '../core/organization-query.ts';
import { pageQuery, PaginationSchema } from '../core/pagination.ts';
import { CREDIT_ENTRY_KINDS } from './credit-entry.entity.ts';

export const CreditsQuery = z.strictObject({
  ...orgIdQuery,
  ...pageQuery,
  kind: z.enum(CREDIT_ENTRY_KINDS).optional().meta({ description: 'Only ledger lines of this kind: grant and top_up add credits, debit is metered GPU usage, adjustment a correction.' }),
});

export const CreditEntryView = z.object({
  id: z.string(),
  kind: z.enum(CREDIT_ENTRY_KINDS),
  amountCents: z.number().int().meta({ description: 'Positive adds to the balance, negative draws from it.' }),
  balanceAfterCents: z.number().int(),
  description: z.string(),
  reference: z.string().meta({ description: 'What caused it: usage:<interval id> for metered usage, checkout:<session id> for a paid top-up.' }),
  createdAt: z.iso.datetime(),
}).meta({ id: 'CreditEntry' });

export const CreditsView = z.object({
  balanceCents: z.number().int().meta({ description: 'Prepaid balance in US cents; below zero after usage during the grace period.' }),
  lastTopUpCents: z.number().int().meta({ description: 'The last grant or top-up; low-balance notices come at 20% and 5% of it.' }),
  lowBalancePercent: z.number().int().nullable().meta({ description: 'The lowest threshold reached since the last top-up (0 once run out); null above all.' }),
  exhaustedAt: z.iso.datetime().nullable().meta({ description: 'When metering drew the balance to zero; new deployments, scale-ups and starts are 402 INSUFFICIENT_CREDITS from then on.' }),
  deploymentsStoppedAt: z.iso.datetime().nullable().meta({ description: 'When Kiln stopped the running deployments, the grace period after exhaustion having ended.' }),
  totals: z.object({
    grantedCents: z.number().int(),
    toppedUpCents: z.number().int(),
    debitedCents: z.number().int(),
    adjustedCents: z.number().int(),
  }),
  entries: z.array(CreditEntryView).meta({ description: 'The ledger, newest first, in cursor pages.' }),
  pagination: PaginationSchema,
}).meta({ id: 'Credits' });

export const UsageQuery = z.strictObject({});

const gpuHours = z.number().meta({ description: 'GPU-hours (GPUs held x hours), to the millisecond.' });

export const UsageView = z.object({
  period: z.object({ start: z.iso.datetime(), end: z.iso.datetime() }).meta({ description: 'The current billing period: the calendar month, UTC.' }),
  asOf: z.iso.datetime(),
  deployments: z.array(z.object({
    deploymentId: z.string(),
    name: z.string(),
    gpu: z.string(),
    gpuHours,
    rateCentsPerGpuHour: z.number().int(),
    costCents: z.number().int(),
    requests: z.number().int(),
    promptTokens: z.number().int(),
    completionTokens: z.number().int(),
  })).meta({ description: 'Each deployment\'s GPU time by GPU type this period, with the inference calls and tokens it served (from the audit records).' }),
  gpuTypes: z.array(z.object({ gpu: z.string(), gpuHours, costCents: z.number().int() })),
  totalCents: z.number().int().meta({ description: 'GPU usage so far this period, to the millisecond, rounded to the cent.' }),
  drawnCents: z.number().int().meta({ description: 'What metering has drawn from credits for this period so far (closed intervals).' }),
  projection: z.object({
    hourlyRateCents: z.number().int().meta({ description: 'What the replicas running now cost an hour.' }),
    periodEndCents: z.number().int().meta({ description: 'totalCents plus the hourly rate until the period ends.' }),
  }),
  balanceCents: z.number().int(),
}).meta({ id: 'Usage' });

export type CreditsInput = z.output<typeof CreditsQuery>;
export type CreditsBody = z.infer<typeof CreditsView>;
export type UsageBody = z.infer<typeof UsageView>;
