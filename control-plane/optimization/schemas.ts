// Payloads of GET, POST and PUT /v1/deployments/{id}/optimization.
import { z } from 'zod';
import { orgIdQuery } from '../core/organization-query.ts';
import { DeploymentView } from '../deployments/schemas.ts';
import { DEPLOYMENT_STATUSES } from '../../workflows/contract/deployment.ts';
import { RECOMMENDATION_KINDS } from '../../catalog/optimization-rules.ts';

const AUTO_APPLY = 'true: Kiln applies, on its own, the first of the cost-saving capacity recommendations (scale-to-zero, then fewer-replicas) '
  + 'while the deployment is running, its measured p95 time to first token within the target, at most one change an hour (audited as deployment.optimize by system:optimization). '
  + 'Changes that add cost or change hardware (more-replicas, larger-gpu, shorter-context, cheaper-gpu) are left for a person to apply; the autoscaler adds replicas under load.';

export const OptimizationQuery = z.strictObject({ ...orgIdQuery });

const figure = z.number().nullable();

export const MeasuredLoad = z.object({
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  windowSeconds: z.number().int(),
  requestsPerSecond: figure,
  generationTokensPerSecond: figure,
  requestsRunningAvg: figure,
  requestsRunningMax: figure,
  requestsWaitingAvg: figure,
  requestsWaitingMax: figure,
  kvCacheUsageMax: figure.meta({ description: 'vLLM\'s KV-cache use (0..1, the replicas\' mean), its peak over the window.' }),
  kvCacheUsageAvg: figure,
  readyReplicasAvg: figure,
  p95TimeToFirstTokenSeconds: figure,
}).meta({ id: 'MeasuredLoad', description: 'What Prometheus measured over the window: rates over it, gauges\' mean and peak (sampled every 15 s); null where it has no sample.' });

export const OptimizationPolicyView = z.object({
  deploymentId: z.string(),
  targetP95TimeToFirstTokenMs: z.number().int().nullable(),
  maxHourlyCents: z.number().int().nullable(),
  autoApply: z.boolean().meta({ description: AUTO_APPLY }),
  updatedAt: z.iso.datetime().nullable().meta({ description: 'null: no policy set yet (no targets).' }),
}).meta({ id: 'OptimizationPolicy' });

export const Recommendation = z.object({
  id: z.enum(RECOMMENDATION_KINDS).meta({ description: 'Stable: the kind. POST names it to apply the recommendation.' }),
  kind: z.enum(RECOMMENDATION_KINDS),
  summary: z.string(),
  evidence: z.object({
    window: z.object({ from: z.iso.datetime(), to: z.iso.datetime(), seconds: z.number().int() }),
    figures: z.record(z.string(), z.number()).meta({ description: 'The measured figures the rule read, by name, with the deployment\'s replicas and hourly cost (and the policy\'s target, if any).' }),
    reason: z.string(),
  }),
  change: z.object({
    replicas: z.number().int().optional(),
    minReplicas: z.number().int().optional(),
    maxReplicas: z.number().int().optional(),
    gpu: z.string().optional(),
    gpusPerReplica: z.number().int().optional(),
    contextLength: z.number().int().optional(),
  }).meta({ description: 'The change of the deployment\'s configuration applying it makes (as PATCH /api/deployments/{id}).' }),
  effect: z.object({
    hourlyCentsNow: z.number().int(),
    hourlyCentsAfter: z.number().int(),
    hourlyCentsChange: z.number().int().meta({ description: 'Negative: it saves that much per hour.' }),
    latency: z.object({ direction: z.enum(['lower', 'higher', 'unchanged']), reason: z.string() }),
  }),
}).meta({ id: 'Recommendation' });

export const DeploymentOptimization = z.object({
  deploymentId: z.string(),
  status: z.enum(DEPLOYMENT_STATUSES),
  at: z.iso.datetime(),
  measured: MeasuredLoad.nullable().meta({ description: 'null while the deployment is not serving (nothing to measure, nothing recommended).' }),
  policy: OptimizationPolicyView,
  recommendations: z.array(Recommendation).meta({ description: 'In order of precedence: latency first, then savings.' }),
}).meta({ id: 'DeploymentOptimization' });

export const ApplyRecommendationRequest = z.strictObject({
  recommendation: z.enum(RECOMMENDATION_KINDS).meta({ description: 'The id of one of the deployment\'s current recommendations.' }),
}).meta({ id: 'ApplyRecommendationRequest' });

export const AppliedRecommendation = z.object({
  applied: Recommendation,
  deployment: DeploymentView,
}).meta({ id: 'AppliedRecommendation' });

export const OptimizationPolicyRequest = z.strictObject({
  targetP95TimeToFirstTokenMs: z.number().int().min(1).max(600_000).nullable().optional()
    .meta({ description: 'p95 time to first token to keep under, ms: no fewer replicas or slower GPU is recommended while above it. null clears it.' }),
  maxHourlyCents: z.number().int().min(0).max(100_000_000).nullable().optional()
    .meta({ description: 'Cost ceiling, US cents per hour: nothing recommended costs more (unless it costs less than now). null clears it.' }),
  autoApply: z.boolean().optional().meta({ description: AUTO_APPLY }),
}).meta({ id: 'OptimizationPolicyRequest' });

export type OptimizationPolicyInput = z.infer<typeof OptimizationPolicyRequest>;
