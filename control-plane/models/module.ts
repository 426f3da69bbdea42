// The model catalog (catalog/models.ts) with what each model needs to run.
import { defineModule } from '../module.ts';
import { modelRoutes } from './routes.ts';
import { createModelService, type ModelService } from './service.ts';

declare module '../module.ts' {
  interface Services { models: ModelService }
}

export const modelsModule = defineModule({
  name: 'models',
  services: ({ cursors }) => ({ models: createModelService({ cursors }) }),
  routes: ({ services }) => modelRoutes(services.models),
});
