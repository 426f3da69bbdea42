// Answer shape of GET /v1/dashboard/metrics.
import { z } from 'zod';
import { orgIdQuery } from '../core/organization-query.ts';
import { DEPLOYMENT_STATUSES } from '../../workflows/contract/deployment.ts';

export const DashboardQuery = z.strictObject({ ...orgIdQuery });

export const DashboardMetrics = z.object({
  at: z.iso.datetime(),
  deploymentsByStatus: z.record(z.enum(DEPLOYMENT_STATUSES), z.number().int()).meta({ description: 'Live deployments by status, every status present (0 for none).' }),
  spend: z.object({
    todayCents: z.number().int().meta({ description: 'Since 00:00 UTC: replica-hours Prometheus measured x GPU prices.' }),
    monthCents: z.number().int().meta({ description: 'Since the first of the month, 00:00 UTC.' }),
  }),
  tokensToday: z.object({ prompt: z.number().int(), generation: z.number().int() }),
  slowest: z.array(z.object({
    deploymentId: z.string(), name: z.string(),
    timeToFirstTokenP95Seconds: z.number(),
  })).meta({ description: 'Up to 5 deployments with the slowest time to first token (p95) over the last hour, slowest first.' }),
}).meta({ id: 'DashboardMetrics' });
