// Payloads of POST /v1/providers/compare-costs.
import { z } from 'zod';
import { GPUS_PER_REPLICA_CHOICES, MAX_CONTEXT_LENGTH, MAX_MODEL_LENGTH } from '../../catalog/deployment-rules.ts';

export const CompareCostsRequest = z.strictObject({
  model: z.string().min(1).max(MAX_MODEL_LENGTH).optional()
    .meta({ description: 'A model to size on each offer: a catalog id, a Hugging Face id or one of the organization\'s models. Or give gpuMemoryGb.', example: 'meta-llama/Llama-3.1-8B-Instruct' }),
  contextLength: z.number().int().min(1).max(MAX_CONTEXT_LENGTH).optional()
    .meta({ description: 'With model: the sequence length a replica must hold, tokens. Absent: as a deployment is sized (4096, or the model\'s own if shorter).' }),
  gpuMemoryGb: z.number().positive().max(1024).optional()
    .meta({ description: 'A GPU requirement instead of a model: GiB of memory each GPU must have.', example: 24 }),
  gpuCount: z.union(GPUS_PER_REPLICA_CHOICES.map((n) => z.literal(n))).optional()
    .meta({ description: 'With gpuMemoryGb: how many such GPUs (1, 2, 4 or 8); 1 when absent.' }),
}).meta({ id: 'CompareCostsRequest' });
export type CompareCostsInput = z.infer<typeof CompareCostsRequest>;

const Source = z.object({
  repository: z.string().nullable(),
  path: z.string(),
  commit: z.string().nullable(),
  date: z.string().nullable().meta({ description: 'The commit\'s date; null where the table was built without it.' }),
  retrievedOn: z.string().nullable().meta({ description: 'The day (UTC) the price was taken from that commit: the price holds as of then. Null for Kiln\'s own GPU types.' }),
}).meta({ description: 'Where the price comes from: a CSV of the public price catalog at a commit, or Kiln\'s own GPU catalog (catalog/gpu-types.ts).' });

export const CostComparison = z.object({
  requirement: z.object({
    model: z.string().nullable(),
    contextLength: z.number().int().nullable().meta({ description: 'The sequence length each offer was sized for (model only).' }),
    gpuMemoryGb: z.number().nullable(),
    gpuCount: z.number().int().nullable(),
  }),
  offers: z.array(z.object({
    provider: z.string().meta({ example: 'aws' }),
    instanceType: z.string(),
    region: z.string().nullable(),
    gpu: z.object({ name: z.string(), memoryGb: z.number(), count: z.number().int() }),
    kilnGpu: z.string().nullable().meta({ description: 'The Kiln GPU type it is, when it is one.' }),
    fits: z.boolean(),
    reason: z.string(),
    replicasPerInstance: z.number().int().nullable().meta({ description: 'Replicas of the model one instance holds (model only; null when it does not fit).' }),
    hourlyUsd: z.number(),
    hourlyCents: z.number(),
    perMillionTokensCents: z.number().nullable()
      .meta({ description: 'The hourly price over the tokens an hour a full instance generates at the throughput measured (see throughput); null where none was measured.' }),
    throughput: z.object({
      generationTokensPerSecondPerReplica: z.number(),
      deploymentId: z.string(),
      windowSeconds: z.number().int(),
    }).nullable().meta({ description: 'What the per-million figure rests on: the generation rate per replica one of the organization\'s deployments of this model on this GPU type had over the window, at its load then (not the most it could serve).' }),
    throughputNote: z.string(),
    source: Source,
  })).meta({ description: 'Every offer of the price table and Kiln\'s own GPU types: those that fit first, cheapest first.' }),
}).meta({ id: 'CostComparison' });
