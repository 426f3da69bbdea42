import { z } from 'zod';
import { DEFAULT_AUTOSCALING, POLICY_BOUNDS, type AutoscalingPolicy } from '../../catalog/autoscaling.ts';
import { GPU_TYPE_IDS } from '../../catalog/gpu-types.ts';
import {
  DTYPES, GPUS_PER_REPLICA_CHOICES, LOADABLE_MODEL, MAX_CONTEXT_LENGTH, MAX_MODEL_LENGTH, MAX_REPLICAS, MAX_VLLM_ARGS, MIN_REPLICAS, NAME_PATTERN, vllmArgsProblem,
} from '../../catalog/deployment-rules.ts';
import { optionalOrgIdQuery, orgIdQuery } from '../core/organization-query.ts';
import { pageQuery, sortParam } from '../core/pagination.ts';
import { DEPLOYMENT_STATUSES } from '../../workflows/contract/deployment.ts';

export const SORT_FIELDS = ['created_at', 'updated_at', 'name', 'status', 'gpu'] as const;

// It becomes Kubernetes object names, a Service's among them: an RFC 1035 DNS label, as the stack requires.
const name = z.string().max(63).regex(NAME_PATTERN, 'must be a DNS label: lower-case letters, digits and hyphens, starting with a letter and ending with a letter or digit')
  .meta({ example: 'llama-chat' });
// The pattern is documented, not enforced here: the service refuses a model outside it with its own answer
// (400 INVALID_MODEL listing the sources Kiln loads).
const model = z.string().min(1).max(MAX_MODEL_LENGTH).meta({
  description: 'Hugging Face id (org/name), hf://, s3:// or gs:// reference.', example: 'meta-llama/Llama-3.1-8B-Instruct', pattern: LOADABLE_MODEL.source,
});
const runtime = z.enum(['vllm']);
const gpu = z.enum(GPU_TYPE_IDS).meta({ description: 'An id from GET /v1/gpu-types.', example: 'nvidia-l4' });
const replicas = z.number().int().min(MIN_REPLICAS).max(MAX_REPLICAS);

/** How Kiln's autoscaler treats the deployment (catalog/autoscaling.ts); each setting optional, Kiln's default when absent. */
const bounded = (key: keyof AutoscalingPolicy, description: string) =>
  z.number().int().min(POLICY_BOUNDS[key].min).max(POLICY_BOUNDS[key].max).optional().meta({ description: `${description} Default ${DEFAULT_AUTOSCALING[key]}.` });
export const AutoscalingRequest = z.strictObject({
  targetRequestsPerReplica: bounded('targetRequestsPerReplica', 'Requests in flight (running and waiting in vLLM\'s queue) one replica should carry; more adds replicas up to maxReplicas.'),
  scaleDownDelaySeconds: bounded('scaleDownDelaySeconds', 'How long the load must fit fewer replicas before they are removed.'),
  scaleToZeroAfterSeconds: bounded('scaleToZeroAfterSeconds', 'With minReplicas 0: seconds without a request after which the deployment scales to zero (its first request wakes it).'),
}).meta({ id: 'AutoscalingPolicy' });

const scaling = {
  replicas: replicas.optional().meta({ description: 'Replicas to run now; Kiln\'s autoscaler then moves between minReplicas and maxReplicas on load.' }),
  minReplicas: replicas.optional().meta({ description: '0 lets the deployment scale to zero when idle; its first inference request wakes it.' }),
  maxReplicas: replicas.min(1).optional(),
  autoscaling: AutoscalingRequest.optional(),
};

/**
 * How vLLM serves the model: each optional, what is left out Kiln settles from the model's size (the fewest
 * GPUs that hold it, the longest context they hold). Templates keep the same fields.
 */
export const servingFields = {
  gpusPerReplica: z.union(GPUS_PER_REPLICA_CHOICES.map((n) => z.literal(n))).optional()
    .meta({ description: "GPUs per replica, vLLM's tensor-parallel size: 1, 2, 4 or 8. Absent: the fewest that hold the model." }),
  contextLength: z.number().int().min(1).max(MAX_CONTEXT_LENGTH).optional()
    .meta({ description: "Longest sequence served, tokens (vLLM --max-model-len). Absent: the longest the GPUs hold, up to the model's own." }),
  dtype: z.enum(DTYPES).optional().meta({ description: "vLLM --dtype. Absent: auto (the checkpoint's 16-bit type)." }),
  vllmArgs: z.array(z.string()).max(MAX_VLLM_ARGS).optional()
    .superRefine((args, ctx) => {
      const problem = args && vllmArgsProblem(args);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .meta({ description: 'Further vLLM server flags, e.g. ["--enable-prefix-caching"]; not the ones Kiln sets from the fields above.', example: ['--enable-prefix-caching'] }),
};

/** The organization's secrets its containers see as environment variables (POST /v1/secrets makes them). */
const secrets = z.array(z.strictObject({
  name: z.string().max(128).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name (letters, digits and _, not starting with a digit)').meta({ example: 'HF_TOKEN' }),
  secretId: z.string().min(1).max(64).meta({ example: 'sec_0123456789abcdefghij' }),
})).max(20).refine((refs) => new Set(refs.map((r) => r.name)).size === refs.length, 'each environment variable name at most once')
  .optional().meta({
    description: 'Secrets of the organization mounted as environment variables, e.g. [{"name":"HF_TOKEN","secretId":"sec_..."}] for a gated model. '
      + 'Kept in a Kubernetes Secret in the organization\'s namespace; a secret in use cannot be deleted. On update: replaces the list ([] removes them).',
  });

export const CreateDeploymentRequest = z.object({ name, model, runtime, gpu, ...scaling, ...servingFields, secrets }).meta({ id: 'CreateDeploymentRequest' });
/** PUT: the whole configuration (the name is fixed at creation). */
export const ReplaceDeploymentRequest = z.strictObject({ model, runtime, gpu, ...scaling, ...servingFields, secrets }).meta({ id: 'ReplaceDeploymentRequest' });
/** PATCH: any part of the configuration. */
export const UpdateDeploymentRequest = z.strictObject({
  model: model.optional(), gpu: gpu.optional(), ...scaling, ...servingFields, secrets,
  templateVersion: z.number().int().min(1).optional().meta({
    description: 'Upgrade to this version of the template the deployment was made from: its configuration, under the fields given here (GET /v1/deployments/outdated-templates says what changes).',
  }),
}).meta({ id: 'UpdateDeploymentRequest' });

/** POST /v1/deployments/{id}/actions: one lifecycle action; `scale` takes the new replica count. */
export const DeploymentActionRequest = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('stop') }),
  z.strictObject({ action: z.literal('start') }),
  z.strictObject({ action: z.literal('restart') }),
  z.strictObject({ action: z.literal('scale'), replicas: replicas.meta({ description: 'Replicas to run now. Outside minReplicas..maxReplicas, the bound moves to it (the answer\'s notices say so).' }) }),
]).meta({ id: 'DeploymentActionRequest' });
export type DeploymentActionInput = z.infer<typeof DeploymentActionRequest>;

export const CreatedDeployment = z.object({
  id: z.string().meta({ example: 'dep_0123456789abcdefghij' }),
  name: z.string(),
  status: z.enum(DEPLOYMENT_STATUSES),
  endpoint: z.url(),
}).meta({ id: 'CreatedDeployment' });

/** POST /v1/deployments' answer: the deployment made, and what creation wants the caller to know. */
export const DeploymentCreation = CreatedDeployment.extend({
  notices: z.array(z.string()).meta({
    description: 'What creation wants you to know, in words: a model check that could not run (the Hugging Face Hub unreachable) is reported here as unverified, with the reason. '
      + 'Empty otherwise, and on a replay of the request by its Idempotency-Key.',
  }),
}).meta({ id: 'DeploymentCreation' });

export const DeploymentView = CreatedDeployment.extend({
  model: z.string(),
  runtime: z.string(),
  gpu: z.string(),
  gpuType: z.string(),
  state: z.enum(['PENDING', 'SCALING', 'HEALTHY', 'IDLE', 'FAILED', 'STOPPED', 'DELETING', 'DELETED']),
  replicas: z.number().int(),
  currentReplicas: z.number().int().meta({ description: 'Replicas running now (the autoscaler\'s choice between the bounds; 0 when scaled to zero).' }),
  minReplicas: z.number().int(),
  maxReplicas: z.number().int(),
  autoscaling: z.object({ targetRequestsPerReplica: z.number().int(), scaleDownDelaySeconds: z.number().int(), scaleToZeroAfterSeconds: z.number().int() }),
  gpusPerReplica: z.number().int(),
  contextLength: z.number().int().nullable().meta({ description: 'vLLM --max-model-len; null: vLLM takes the model\'s own (a model Kiln has no figures for).' }),
  dtype: z.enum(DTYPES),
  vllmArgs: z.array(z.string()),
  failureReason: z.string().nullable().meta({ description: 'Why the last rollout failed; while a rollout waits for a node pool to grow, what is being added ("adding 2 nvidia-l4 nodes to pool l4"); null otherwise.' }),
  templateId: z.string().nullable().meta({ description: 'The template it was made from or follows (POST /v1/templates/{id}/deploy, share-as-template); null otherwise.' }),
  templateVersion: z.number().int().nullable().meta({ description: 'That template\'s version it runs; PATCH templateVersion upgrades it.' }),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
}).meta({ id: 'Deployment' });

/** POST /v1/deployments/{id}/actions answers the deployment, and what Kiln changed beyond the action itself. */
export const DeploymentActionResult = DeploymentView.extend({
  notices: z.array(z.string()).meta({ description: 'What the action changed beyond itself, in words: a scale outside the bounds moves minReplicas or maxReplicas to the count asked for. Empty otherwise.' }),
}).meta({ id: 'DeploymentActionResult' });

export const DeletedDeployment = z.object({ id: z.string(), status: z.enum(['deleting', 'deleted']) }).meta({ id: 'DeletedDeployment' });

export const DeploymentIdParams = z.object({ id: z.string().max(64) });

const day = z.iso.date().meta({ description: 'YYYY-MM-DD (UTC).' });
export const ListDeploymentsQuery = z.object({
  ...pageQuery,
  status: z.string().max(500).optional()
    .transform((value, ctx) => {
      const statuses = value?.split(',');
      if (statuses?.some((s) => !(DEPLOYMENT_STATUSES as readonly string[]).includes(s))) {
        ctx.addIssue({ code: 'custom', message: `each status must be one of ${DEPLOYMENT_STATUSES.join(', ')}` });
        return z.NEVER;
      }
      return statuses as (typeof DEPLOYMENT_STATUSES)[number][] | undefined;
    })
    .meta({ description: 'Comma-separated statuses.', example: 'running,deploying' }),
  created_after: day.optional().meta({ description: 'Created on or after this day (YYYY-MM-DD, UTC).' }),
  created_before: day.optional().meta({ description: 'Created before this day (YYYY-MM-DD, UTC).' }),
  sort: sortParam(SORT_FIELDS, '-created_at'),
  ...optionalOrgIdQuery,
});

/** The reference row lists `orgId`: required there. */
export const ListDeploymentsV1Query = ListDeploymentsQuery.extend(orgIdQuery);

export type CreateDeploymentInput = z.infer<typeof CreateDeploymentRequest>;
export type ReplaceDeploymentInput = z.infer<typeof ReplaceDeploymentRequest>;
export type UpdateDeploymentInput = z.infer<typeof UpdateDeploymentRequest>;
export type ListDeploymentsInput = z.output<typeof ListDeploymentsQuery>;
export type DeploymentViewBody = z.infer<typeof DeploymentView>;

export const DryRunQuery = z.strictObject({
  preview: z.enum(['true', 'false']).default('true').transform((v) => v === 'true')
    .meta({ description: 'false: the checks and cost alone, answered at once (a form checking itself); the plan is then null.' }),
});

/** POST /v1/deployments/validate: a creation request, checked and previewed, nothing created. */
export const DeploymentDryRun = z.object({
  valid: z.boolean().meta({ description: 'Whether creation would succeed: every check passed (or is unverified and the organization allows unverified models) and the preview, when asked for, planned the objects.' }),
  checks: z.array(z.object({
    check: z.enum(['name', 'model', 'replicas', 'model_fit', 'accepting', 'placement', 'capacity', 'credits', 'budget']),
    passed: z.boolean().meta({ description: 'True only when the check ran and passed: an unverified check is not passed.' }),
    status: z.enum(['passed', 'failed', 'unverified']).meta({
      description: '`unverified`: the check could not run (the model check while the Hugging Face Hub cannot be reached); the reason says why. '
        + 'Creation then goes ahead unless the organization refuses unverified models (its settings\' `unverifiedModels`).',
    }),
    reason: z.string(),
  })).meta({ description: 'Every check creation makes, in its order, each with why it passed or failed.' }),
  deployment: z.object({
    name: z.string(), model: z.string(), runtime: z.string(), gpu: z.string(),
    replicas: z.number().int().optional(), minReplicas: z.number().int().optional(), maxReplicas: z.number().int().optional(),
    gpusPerReplica: z.number().int().optional(), contextLength: z.number().int().nullable().optional(), dtype: z.enum(DTYPES).optional(),
    vllmArgs: z.array(z.string()).optional(),
    cluster: z.object({ id: z.string(), name: z.string() }).nullable().meta({ description: 'The GPU cluster creation would place it on.' }),
  }).meta({ description: 'What creation would record: the request with what Kiln settles (sizing, cluster).' }),
  capacity: z.array(z.object({
    clusterId: z.string(),
    name: z.string(),
    gpusFree: z.number().int().meta({ description: 'GPUs of the requested type free now.' }),
    replicasFit: z.number().int().meta({ description: 'Replicas of this size that fit now: each replica\'s GPUs on one node.' }),
    measuredFrom: z.enum(['nodes', 'records']).meta({ description: '`nodes`: each node\'s allocatable GPUs less what its pods request, read from the cluster now; `records`: what the cluster offers less what Kiln\'s deployments hold (a cluster Kiln cannot read).' }),
    note: z.string().nullable().meta({ description: 'Why it was counted from records; null when read from the nodes.' }),
  })).meta({ description: 'Every serving GPU cluster you may use that offers the GPU type, in the order placement tries them; the capacity check is the placed cluster\'s.' }),
  fit: z.object({
    verdict: z.enum(['fits_now', 'fits_after_growth', 'cannot_fit']).meta({ description: '`fits_now`: every replica fits on the placed cluster\'s nodes now; `fits_after_growth`: the rest fit once the rollout grows a node pool of the cluster (`growth`); `cannot_fit`: not even then (`reason` says why: no cluster placed, a pool at its maximum, no pool of the GPU type and size, a cluster whose pools Kiln does not grow).' }),
    replicas: z.number().int().meta({ description: 'Replicas asked for.' }),
    replicasFit: z.number().int().meta({ description: 'Of those, the replicas that fit now on the placed cluster.' }),
    growth: z.object({
      nodes: z.number().int().meta({ description: 'Nodes added, over every pool that grows.' }),
      hourlyCents: z.number().int().meta({ description: 'What the added nodes cost per hour: GPU type price x GPUs per node x nodes, US cents.' }),
      pools: z.array(z.object({
        pool: z.string(), gpuType: z.string(), gpusPerNode: z.number().int(),
        fromNodes: z.number().int().meta({ description: 'The pool\'s desired size now.' }),
        toNodes: z.number().int(),
        nodes: z.number().int(),
        hourlyCents: z.number().int(),
      })).meta({ description: 'In the order the rollout grows them: the first pool of the type with room, to its maximum if need be, then the next.' }),
    }).nullable().meta({ description: 'The growth of the cluster\'s node pools the rollout would make for the replicas that do not fit now (by the rule the growth itself follows); null when none would.' }),
    reason: z.string().meta({ description: 'The verdict in a sentence: the capacity check\'s reason.' }),
  }).meta({ description: 'Whether the replicas fit on the cluster creation would choose: now, after a node pool grows (by how many nodes of which pool, at what added cost per hour), or not at all.' }),
  cost: z.object({
    hourlyCents: z.number().int().meta({ description: 'GPU type price x GPUs per replica x replicas, US cents.' }),
    dailyCents: z.number().int(),
    monthlyCents: z.number().int().meta({ description: '30 days.' }),
    balanceCents: z.number().int(),
    hoursCovered: z.number().nullable().meta({ description: 'Hours the balance pays for at this rate.' }),
  }),
  plan: z.object({
    resources: z.array(z.object({
      operation: z.string().meta({ example: 'create' }),
      type: z.string().meta({ example: 'kubernetes:apps/v1:Deployment' }),
      name: z.string(),
    })).meta({ description: 'What `pulumi preview` of the deployment\'s program plans, from the Pulumi engine.' }),
    previewMs: z.number().int(),
    failure: z.string().nullable().meta({ description: 'Why the preview gave no plan; null when it did.' }),
  }).nullable().meta({ description: 'Present once every check passed and a preview was asked for (it runs on the cluster of the placement check).' }),
}).meta({ id: 'DeploymentDryRun' });

/** GET /v1/deployments/validate: the rules a creation request follows. */
export const DeploymentRules = z.object({
  name: z.object({ pattern: z.string(), maxLength: z.number().int() }),
  model: z.object({ pattern: z.string(), maxLength: z.number().int(), sources: z.array(z.string()) }),
  runtimes: z.array(z.string()),
  replicas: z.object({ min: z.number().int(), max: z.number().int() }),
  gpusPerReplica: z.array(z.number().int()),
  contextLength: z.object({ min: z.number().int(), max: z.number().int() }),
  dtypes: z.array(z.enum(DTYPES)),
  vllmArgs: z.object({ max: z.number().int(), managedFlags: z.array(z.string()) }),
  gpuTypes: z.array(z.object({ id: z.string(), name: z.string(), memoryGb: z.number(), hourlyPriceUsd: z.number(), available: z.boolean() })),
  plan: z.object({
    name: z.string(),
    rateLimit: z.object({ perMinute: z.number().int(), burst: z.number().int() }),
    creditsCents: z.number().int(),
    maxHourlyCents: z.number().int().meta({ description: 'The most a new deployment may cost per hour: creation asks the balance to cover an hour.' }),
  }),
}).meta({ id: 'DeploymentRules' });
