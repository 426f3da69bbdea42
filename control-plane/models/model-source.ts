// The one check of a model reference's form, for every route that takes one (deployments, models): a model
// Kiln cannot load is 400 INVALID_MODEL naming it and listing the sources Kiln loads.
import { isLoadableModel, MODEL_SOURCES } from '../../catalog/deployment-rules.ts';
import { InvalidModelError } from '../core/errors.ts';

export function assertLoadableModel(model: string): void {
  if (!isLoadableModel(model)) {
    throw new InvalidModelError(`Model ${model} is not a reference Kiln can load`, { model, valid_sources: MODEL_SOURCES });
  }
}
