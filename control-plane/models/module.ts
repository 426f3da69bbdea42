// Models: the catalog (catalog/models.ts), each organization's own models and the Hugging Face Hub's facts,
// with what each model needs to run.
import { defineModule } from '../module.ts';
import { createHubClient } from './hub.ts';
import { modelRoutes } from './routes.ts';
import { createModelService, type ModelService } from './service.ts';

declare module '../module.ts' {
  interface Services { models: ModelService }
}

export const modelsModule = defineModule({
  name: 'models',
  services: ({ cursors, config }) => ({ models: createModelService({ cursors, hub: createHubClient(config.hub) }) }),
  routes: ({ services }) => modelRoutes(services.models),
});
