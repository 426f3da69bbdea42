// Inference through Kiln: a deployment's model called with an API key, relayed to its Ready replicas.
import { defineModule } from '../module.ts';
import { createInferenceGateway, type InferenceGateway } from './gateway.ts';
import { inferenceRoutes } from './routes.ts';
import { createInferenceService } from './service.ts';

declare module '../module.ts' {
  interface Services { inferenceGateway: InferenceGateway }
}

export const inferenceModule = defineModule({
  name: 'inference',
  services: ({ log, inference }) => ({ inferenceGateway: createInferenceGateway({ log, options: inference }) }),
  routes: ({ services }) => inferenceRoutes(createInferenceService({
    clusters: services.clusters, gateway: services.inferenceGateway, orchestrator: services.deploymentOrchestrator,
  })),
  // Stops the gateway's pod watches.
  close: ({ inferenceGateway }) => inferenceGateway.close(),
});
