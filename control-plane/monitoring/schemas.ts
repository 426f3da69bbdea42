// Request and answer shapes of the metric routes.
import { z } from 'zod';
import { orgIdQuery } from '../core/organization-query.ts';

/** Prometheus answers at most 11,000 points per series. */
export const MAX_POINTS = 11_000;
const MAX_RANGE_DAYS = 31;

const instant = z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601 timestamp.' });

/** A range of series: GET /v1/deployments/{id}/metrics and GET /v1/monitoring/metrics. */
export const MetricsRangeQuery = z.strictObject({
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

export const CurrentMetricsQuery = z.strictObject({ ...orgIdQuery });

const points = z.array(z.object({ time: z.number().int().meta({ description: 'Unix seconds.' }), value: z.number().nullable() }))
  .meta({ description: 'One point a step; value null where there is no sample (no replica was serving).' });
const percentiles = z.object({ p50: points, p95: points, p99: points });

const seriesShape = z.object({
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
});

const range = { from: z.iso.datetime(), to: z.iso.datetime(), stepSeconds: z.number().int() };

export const DeploymentMetrics = z.object({ deploymentId: z.string(), ...range, series: seriesShape }).meta({ id: 'DeploymentMetrics' });

export const OrganizationMetrics = z.object({
  ...range,
  deployments: z.array(z.object({ deploymentId: z.string(), name: z.string(), status: z.string(), series: seriesShape })),
}).meta({ id: 'OrganizationMetrics' });

const figure = z.number().nullable();
const figures = {
  requestsPerSecond: figure, errorsPerSecond: figure, promptTokensPerSecond: figure, generationTokensPerSecond: figure,
  timeToFirstTokenSeconds: z.object({ p50: figure, p95: figure, p99: figure }), e2eLatencySeconds: z.object({ p50: figure, p95: figure, p99: figure }),
  requestsRunning: figure, requestsWaiting: figure, kvCacheUsage: figure, readyReplicas: figure,
};

export const CurrentMetrics = z.object({
  at: z.iso.datetime(),
  windowSeconds: z.number().int().meta({ description: 'Rates and percentiles are over this many seconds before `at`.' }),
  totals: z.object({
    deployments: z.number().int(), requestsPerSecond: z.number(), errorsPerSecond: z.number(), promptTokensPerSecond: z.number(),
    generationTokensPerSecond: z.number(), requestsRunning: z.number(), requestsWaiting: z.number(), readyReplicas: z.number(),
  }),
  deployments: z.array(z.object({ deploymentId: z.string(), name: z.string(), status: z.string(), ...figures })
    .meta({ description: 'null: no sample (no replica serving).' })),
}).meta({ id: 'CurrentMetrics' });

export type MetricsRangeInput = z.output<typeof MetricsRangeQuery>;

const usagePoints = z.array(z.object({ time: z.number().int(), requests: z.number().int(), promptTokens: z.number().int(), completionTokens: z.number().int() }))
  .meta({ description: 'Inference calls and their tokens in each step from `time` (unix seconds).' });

export const UsageAnalytics = z.object({
  ...range,
  byDeployment: z.array(z.object({
    deploymentId: z.string(),
    name: z.string().nullable(),
    points: usagePoints,
    e2eLatencyP95Seconds: points.meta({ description: 'End-to-end latency (p95) the model servers measured.' }),
  })),
  byApiKey: z.array(z.object({ apiKeyId: z.string(), name: z.string().nullable(), prefix: z.string().nullable(), points: usagePoints })),
}).meta({ id: 'UsageAnalytics' });
