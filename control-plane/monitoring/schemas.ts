// Request and answer shapes of the metric routes.
import { z } from 'zod';
import { orgIdQuery } from '../core/organization-query.ts';

/** Prometheus answers at most 11,000 points per series. */
export const MAX_POINTS = 11_000;
const MAX_RANGE_DAYS = 31;

const instant = z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601 timestamp.' });

export const DeploymentMetricsQuery = z.strictObject({
  ...orgIdQuery,
  from: instant.optional().meta({ description: 'Start of the range; an hour before `to` when absent.' }),
  to: instant.optional().meta({ description: 'End of the range; now when absent.' }),
  step: z.coerce.number().int().min(1).max(86_400).optional()
    .meta({ description: 'Seconds between points; about 300 points over the range when absent (at least 5 s).' }),
}).transform((q, ctx) => {
  const to = q.to ? new Date(q.to) : new Date();
  const from = q.from ? new Date(q.from) : new Date(to.getTime() - 3_600_000);
  const seconds = (to.getTime() - from.getTime()) / 1000;
  if (seconds <= 0) ctx.addIssue({ code: 'custom', path: ['from'], message: 'must be before to' });
  if (seconds > MAX_RANGE_DAYS * 86_400) ctx.addIssue({ code: 'custom', path: ['from'], message: `the range may span at most ${MAX_RANGE_DAYS} days` });
  const stepSeconds = q.step ?? Math.max(5, Math.ceil(seconds / 300));
  if (seconds / stepSeconds > MAX_POINTS) ctx.addIssue({ code: 'custom', path: ['step'], message: `too small for the range: at most ${MAX_POINTS} points per series` });
  return { orgId: q.orgId, from, to, stepSeconds };
});

const points = z.array(z.tuple([z.number(), z.number().nullable()]))
  .meta({ description: '[unix seconds, value] pairs; null where there is no sample (no replica was serving).' });
const percentiles = z.object({ p50: points, p95: points, p99: points });

export const DeploymentMetrics = z.object({
  deploymentId: z.string(),
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  stepSeconds: z.number().int(),
  series: z.object({
    requestsPerSecond: points,
    errorsPerSecond: points.meta({ description: 'Requests that ended without finishing (aborted).' }),
    promptTokensPerSecond: points,
    generationTokensPerSecond: points,
    timeToFirstTokenSeconds: percentiles,
    e2eLatencySeconds: percentiles,
    requestsRunning: points,
    requestsWaiting: points,
    kvCacheUsage: points.meta({ description: 'Share of the KV cache in use, 0 to 1, averaged over replicas.' }),
    readyReplicas: points.meta({ description: 'Replicas whose model server answered its last scrape.' }),
  }),
}).meta({ id: 'DeploymentMetrics' });

export type DeploymentMetricsInput = z.output<typeof DeploymentMetricsQuery>;
