// Request and answer shapes of the model catalog routes.
import { z } from 'zod';
import { GPU_TYPE_IDS } from '../../catalog/gpu-types.ts';
import { GPUS_PER_REPLICA_CHOICES } from '../../catalog/deployment-rules.ts';
import { MODEL_TASKS } from '../../catalog/models.ts';
import { orgIdQuery } from '../core/organization-query.ts';
import { pageQuery } from '../core/pagination.ts';

/** A model's id in a path: its Hugging Face id, URL-encoded (`meta-llama%2FLlama-3.1-8B-Instruct`). */
export const ModelIdParams = z.object({
  id: z.string().min(1).max(255).meta({ description: 'The model\'s Hugging Face id, URL-encoded.', example: 'meta-llama%2FLlama-3.1-8B-Instruct' }),
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

export const ModelView = z.object({
  id: z.string().meta({ example: 'meta-llama/Llama-3.1-8B-Instruct' }),
  displayName: z.string(),
  family: z.string(),
  source: z.enum(['catalog']).meta({ description: 'catalog: shipped with Kiln, read-only.' }),
  task: z.enum(MODEL_TASKS),
  parametersBillion: z.number(),
  architecture: z.string(),
  contextLength: z.number().int(),
  layers: z.number().int(),
  kvHeads: z.number().int(),
  headSize: z.number().int(),
  dtype: z.string(),
  license: z.string(),
  gated: z.boolean(),
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
  })),
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
  contextLength: z.number().int(),
  valid: z.boolean().meta({ description: 'Whether every check passed.' }),
  checks: z.array(z.object({ check: z.enum(MODEL_CHECKS), passed: z.boolean(), reason: z.string() })),
  memory: FitReportView,
}).meta({ id: 'ModelValidation' });

export type SearchModelsInput = z.output<typeof ListModelsQuery>;
export type ValidateModelInput = z.output<typeof ValidateModelRequest>;
