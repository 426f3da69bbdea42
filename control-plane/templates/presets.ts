// Catalog presets: a template Kiln ships for every chat model of its catalog (catalog/models.ts) that one GPU
// holds, on the cheapest GPU type that does. Built from the catalog's figures with the deployment rules'
// own sizing (settleServing), so a preset deploys exactly as its preview says. Presets have no row: one
// version each, never changed.
import { GPU_TYPES } from '../../catalog/gpu-types.ts';
import { DEFAULT_MIN_CONTEXT, smallestGpuCount } from '../../catalog/model-fit.ts';
import { MODELS, type CatalogModel } from '../../catalog/models.ts';
import { settleServing } from '../deployments/rules.ts';
import type { TemplateConfigurationBody } from './schemas.ts';

export const PRESET_PREFIX = 'preset_';

export interface Preset {
  id: string;
  name: string;
  description: string;
  configuration: TemplateConfigurationBody;
}

const BY_PRICE = [...GPU_TYPES].sort((a, b) => a.hourlyPriceUsd - b.hourlyPriceUsd);

/** `preset_` and the model id in lower case, each run of other characters a hyphen: meta-llama/Llama-3.1-8B → preset_meta-llama-llama-3-1-8b. */
export function presetId(modelId: string): string {
  return PRESET_PREFIX + modelId.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

function preset(model: CatalogModel): Preset | undefined {
  const sizing = Math.min(DEFAULT_MIN_CONTEXT, model.contextLength);
  const gpu = BY_PRICE.find((g) => smallestGpuCount(model, g, sizing) === 1);
  if (!gpu) return undefined;
  const serving = settleServing(model.id, gpu.id, { gpusPerReplica: 1 });
  return {
    id: presetId(model.id),
    name: `${model.displayName} on ${gpu.name}`,
    description: `${model.displayName} (${model.parametersBillion}B parameters, ${model.license} license${model.gated ? ', gated: needs a Hugging Face token' : ''}) on one ${gpu.name}, up to ${serving.contextLength} tokens of context.`,
    configuration: { model: model.id, gpu: gpu.id, replicas: 1, minReplicas: 1, maxReplicas: 1, ...serving },
  };
}

/** Every preset, by name (then id), as lists order them. */
export const PRESETS: readonly Preset[] = MODELS.filter((m) => m.task === 'chat').flatMap((m) => preset(m) ?? [])
  .sort((a, b) => compareText(a.name, b.name) || compareText(a.id, b.id));

export function findPreset(id: string): Preset | undefined {
  return PRESETS.find((p) => p.id === id);
}

/** Code-point order: how PostgreSQL's "C" collation orders the template names the lists merge with these. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
