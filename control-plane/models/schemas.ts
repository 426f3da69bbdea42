// Request and answer shapes of the model routes: the catalog, the organization's registry and Hub models.
import { z } from 'zod';
import { GPU_TYPE_IDS } from '../../catalog/gpu-types.ts';
import { GPUS_PER_REPLICA_CHOICES, MAX_CONTEXT_LENGTH } from '../../catalog/deployment-rules.ts';
import { MODEL_TASKS } from '../../catalog/models.ts';
import { orgIdQuery } from '../core/organization-query.ts';
import { pageQuery } from '../core/pagination.ts';

/** A model's id in a path: its reference, URL-encoded (`meta-llama%2FLlama-3.1-8B-Instruct`, `s3%3A%2F%2Fbucket%2Fllama`). */
export const ModelIdParams = z.object({
  id: z.string().min(1).max(255).meta({
    description: 'The model\'s reference, URL-encoded: a Hugging Face id (org/name, optionally @revision), or an s3://, gs:// or pvc:// location.',
    example: 'meta-llama%2FLlama-3.1-8B-Instruct',
  }),
});

const contextLength = z.coerce.number().int().min(1).max(10_000_000)
  .meta({ description: 'Tokens of one sequence (vLLM max_model_len); the model\'s own context length when left out.' });
const billions = z.coerce.number().min(0).max(10_000);
const gpu = z.enum(GPU_TYPE_IDS).meta({ description: 'A GPU type of GET /v1/gpu-types.' });

export const SearchModelsQuery = z.strictObject({
  ...orgIdQuery,
  ...pageQuery,
  q: z.string().trim().max(200).optional().meta({ description: 'Words the id, name or family contain (case-insensitive).', example: 'llama' }),
  task: z.enum(MODEL_TASKS).optional(),
  minParamsB: billions.optional().meta({ description: 'At least this many parameters, billions.' }),
  maxParamsB: billions.optional().meta({ description: 'At most this many parameters, billions.' }),
  license: z.string().max(100).optional().meta({ description: 'Hugging Face license tag.', example: 'apache-2.0' }),
  gated: z.enum(['true', 'false']).transform((v) => v === 'true').optional().meta({ description: 'Whether the Hub gates downloads (a token is needed).' }),
  fitsGpu: gpu.optional().meta({ description: 'Only models a replica of at most 8 of these GPUs can serve, at contextLength.' }),
  contextLength: contextLength.optional(),
}).meta({ id: 'SearchModelsQuery' });

/** GET /api/models: the platform API's list, with the same filters and no orgId. */
export const ListModelsQuery = SearchModelsQuery.omit({ orgId: true }).meta({ id: 'ListModelsQuery' });

export const ModelDetailsQuery = z.strictObject({ ...orgIdQuery, contextLength: contextLength.optional() });

const unknown = <T extends z.ZodType>(schema: T) => schema.nullable();

export const ModelView = z.object({
  id: z.string().meta({ example: 'meta-llama/Llama-3.1-8B-Instruct', description: 'The reference (hf:// left out), as deployments take it.' }),
  source: z.enum(['catalog', 'organization', 'hub']).meta({
    description: 'catalog: shipped with Kiln, read-only; organization: in your organization\'s models (validated or deployed; PATCH and DELETE change it); hub: a Hugging Face model in neither, described by the Hub.',
  }),
  displayName: z.string(),
  description: z.string().nullable().meta({ description: 'Your organization\'s note on its model; null for catalog models.' }),
  // Facts: always known for catalog models; null where the Hub does not tell, and for s3, gs and pvc locations.
  family: unknown(z.string()),
  task: unknown(z.enum(MODEL_TASKS)),
  parametersBillion: unknown(z.number()),
  architecture: unknown(z.string()),
  contextLength: unknown(z.number().int()),
  layers: unknown(z.number().int()),
  kvHeads: unknown(z.number().int()),
  headSize: unknown(z.number().int()),
  dtype: unknown(z.string()),
  license: unknown(z.string()),
  gated: unknown(z.boolean()),
  defaultVllmArgs: z.array(z.string()).meta({ description: 'vLLM arguments your organization gives this model by default; empty for catalog models.' }),
  defaultContextLength: z.number().int().nullable().meta({ description: 'Context length your organization serves it at by default; null: the model\'s own.' }),
}).meta({ id: 'Model' });

const FitReportView = z.object({
  fits: z.boolean(),
  usableGb: z.number().meta({ description: 'GPU memory x count x vLLM\'s default gpu_memory_utilization (0.9).' }),
  weightsGb: z.number(),
  overheadGb: z.number().meta({ description: 'Held for activations and CUDA graphs, per GPU.' }),
  kvCacheGb: z.number().meta({ description: 'Left for the KV cache; negative when the weights alone do not fit.' }),
  kvPerSequenceGb: z.number().meta({ description: 'KV cache of one sequence of contextLength tokens.' }),
  maxConcurrentSequences: z.number().int(),
}).meta({ id: 'ModelFit' });

export const ModelDetails = ModelView.extend({
  hardware: z.array(z.object({
    gpu: z.string(),
    contextLength: z.number().int(),
    gpusPerReplica: z.number().int().nullable().meta({ description: 'The fewest GPUs of this type a replica needs; null when 8 are not enough.' }),
    hourlyPriceUsd: z.number().nullable().meta({ description: 'One replica on that many GPUs.' }),
    tokensPerSecond: z.object({ low: z.number(), high: z.number() }).nullable()
      .meta({ description: 'Estimated decoding speed of one sequence (memory-bandwidth bound).' }),
  })).meta({ description: 'Empty while the model\'s size or shape is unknown.' }),
}).meta({ id: 'ModelDetails' });

export const ValidateModelRequest = z.strictObject({
  gpu,
  gpusPerReplica: z.union(GPUS_PER_REPLICA_CHOICES.map((n) => z.literal(n))).default(1).meta({ description: 'GPUs per replica (tensor-parallel size): 1, 2, 4 or 8.' }),
  contextLength: contextLength.optional(),
}).meta({ id: 'ValidateModelRequest' });

export const MODEL_CHECKS = ['source', 'architecture', 'context_length', 'memory', 'gated_token'] as const;

export const ModelValidation = z.object({
  model: z.string(),
  gpu: z.string(),
  gpusPerReplica: z.number().int(),
  contextLength: z.number().int().nullable().meta({ description: 'The one asked for, else your organization\'s default, else the model\'s own; null when unknown.' }),
  valid: z.boolean().meta({ description: 'Whether no check failed (a check Kiln cannot make, passed null, does not fail it).' }),
  checks: z.array(z.object({
    check: z.enum(MODEL_CHECKS),
    passed: z.boolean().nullable().meta({ description: 'null: Kiln cannot tell, the facts it needs being unknown (s3, gs and pvc locations; a gated model\'s shape without KILN_HF_TOKEN).' }),
    reason: z.string(),
  })),
  memory: FitReportView.nullable().meta({ description: 'null when the model\'s size or shape is unknown.' }),
}).meta({ id: 'ModelValidation' });

export const UpdateModelRequest = z.strictObject({
  displayName: z.string().trim().min(1).max(200).nullable().optional().meta({ description: 'null: the model\'s own name.' }),
  description: z.string().trim().max(2000).nullable().optional(),
  defaultVllmArgs: z.array(z.string()).optional().meta({
    description: 'Extra vLLM server arguments, each one token (`--enable-prefix-caching`, `--max-num-seqs=64`); not those Kiln sets from a deployment\'s own fields.',
  }),
  defaultContextLength: z.number().int().min(1).max(MAX_CONTEXT_LENGTH).nullable().optional()
    .meta({ description: 'Tokens of one sequence; at most the model\'s own context length when known. null: the model\'s own.' }),
}).meta({ id: 'UpdateModelRequest' });

export const DeletedModel = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'DeletedModel' });

export type SearchModelsInput = z.output<typeof ListModelsQuery>;
export type ValidateModelInput = z.output<typeof ValidateModelRequest>;
export type UpdateModelInput = z.output<typeof UpdateModelRequest>;
export type ModelViewBody = z.infer<typeof ModelView>;
