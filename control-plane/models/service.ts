// The model catalog as the API offers it: search, details with what each GPU type needs, and validation of
// one placement. The figures come from catalog/model-fit.ts, which deployments use too.
import { findGpuType, GPU_TYPES, type GpuType } from '../../catalog/gpu-types.ts';
import { decodeTokensPerSecond, describeFit, modelFit, smallestGpuCount } from '../../catalog/model-fit.ts';
import { findCatalogModel, MODELS, VLLM_ARCHITECTURES, type CatalogModel } from '../../catalog/models.ts';
import { NotFoundError } from '../core/errors.ts';
import type { CursorCodec, Page } from '../core/pagination.ts';
import { assertLoadableModel } from './model-source.ts';
import type { MODEL_CHECKS, SearchModelsInput, ValidateModelInput } from './schemas.ts';

const ORDERING = 'id';
/** The catalog in the order search pages through it. */
const MODELS_BY_ID = [...MODELS].sort((a, b) => a.id.localeCompare(b.id));

type ModelView = CatalogModel & { source: 'catalog' };

export function createModelService(deps: { cursors: CursorCodec }) {
  const view = (model: CatalogModel): ModelView => ({ ...model, source: 'catalog' });

  /** The catalog model `id` names; 400 INVALID_MODEL when it is no model reference, 404 when Kiln does not know it. */
  function find(id: string): CatalogModel {
    assertLoadableModel(id);
    const model = findCatalogModel(id);
    if (!model) throw new NotFoundError(`Model ${id} is not in Kiln's model catalog`);
    return model;
  }

  function placement(model: CatalogModel, gpu: GpuType, contextLength: number) {
    const gpusPerReplica = smallestGpuCount(model, gpu, contextLength) ?? null;
    const [low, high] = gpusPerReplica ? decodeTokensPerSecond(model, gpu, gpusPerReplica) : [];
    return {
      gpu: gpu.id,
      contextLength,
      gpusPerReplica,
      hourlyPriceUsd: gpusPerReplica ? Math.round(gpu.hourlyPriceUsd * gpusPerReplica * 100) / 100 : null,
      tokensPerSecond: gpusPerReplica ? { low: low!, high: high! } : null,
    };
  }

  return {
    search(query: SearchModelsInput): Page<ModelView> {
      const words = query.q?.toLowerCase().split(/\s+/).filter(Boolean) ?? [];
      const fitsOn = query.fitsGpu ? findGpuType(query.fitsGpu)! : undefined;
      const after = query.cursor ? (JSON.parse(deps.cursors.decode(query.cursor, ORDERING)) as string) : undefined;
      const matching = MODELS_BY_ID
        .filter((m) => after === undefined || m.id.localeCompare(after) > 0)
        .filter((m) => words.every((word) => `${m.id} ${m.displayName} ${m.family}`.toLowerCase().includes(word)))
        .filter((m) => !query.task || m.task === query.task)
        .filter((m) => query.minParamsB === undefined || m.parametersBillion >= query.minParamsB)
        .filter((m) => query.maxParamsB === undefined || m.parametersBillion <= query.maxParamsB)
        .filter((m) => !query.license || m.license === query.license)
        .filter((m) => query.gated === undefined || m.gated === query.gated)
        .filter((m) => !fitsOn || smallestGpuCount(m, fitsOn, Math.min(query.contextLength ?? m.contextLength, m.contextLength)) !== undefined);
      return deps.cursors.page(matching.slice(0, query.limit + 1).map(view), query.limit, ORDERING, (last) => last.id);
    },

    details(id: string, contextLength?: number) {
      const model = find(id);
      const tokens = Math.min(contextLength ?? model.contextLength, model.contextLength);
      return { ...view(model), hardware: GPU_TYPES.map((gpu) => placement(model, gpu, tokens)) };
    },

    validate(id: string, input: ValidateModelInput) {
      const model = find(id);
      const gpu = findGpuType(input.gpu)!;
      const contextLength = input.contextLength ?? model.contextLength;
      const memory = modelFit({ model, gpu, gpuCount: input.gpusPerReplica, contextLength });
      const checks: Array<{ check: (typeof MODEL_CHECKS)[number]; passed: boolean; reason: string }> = [
        { check: 'source', passed: true, reason: `${model.id} is a Hugging Face model in Kiln's catalog` },
        VLLM_ARCHITECTURES.includes(model.architecture)
          ? { check: 'architecture', passed: true, reason: `vLLM serves ${model.architecture}` }
          : { check: 'architecture', passed: false, reason: `vLLM does not serve ${model.architecture}` },
        contextLength <= model.contextLength
          ? { check: 'context_length', passed: true, reason: `${contextLength} tokens is within the model's ${model.contextLength}` }
          : { check: 'context_length', passed: false, reason: `${contextLength} tokens exceeds the model's ${model.contextLength}` },
        { check: 'memory', passed: memory.fits, reason: `${gpu.name}: ${describeFit(memory, { gpuCount: input.gpusPerReplica, contextLength })}` },
        model.gated
          ? { check: 'gated_token', passed: false, reason: 'the Hugging Face Hub gates this model: a deployment needs a Hugging Face token secret, and Kiln cannot store secrets yet' }
          : { check: 'gated_token', passed: true, reason: 'the model is not gated: no Hugging Face token is needed' },
      ];
      return {
        model: model.id, gpu: gpu.id, gpusPerReplica: input.gpusPerReplica, contextLength,
        valid: checks.every((c) => c.passed), checks, memory,
      };
    },
  };
}

export type ModelService = ReturnType<typeof createModelService>;
