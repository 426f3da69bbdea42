// Help and the assistant: Kiln's documentation as a ranked search (/v1/onboarding/help), and an assistant that
// answers from it and from the caller's own organization data, citing what it used (/v1/ai-assistant).
import { defineModule } from '../module.ts';
import { createInferenceService } from '../inference/service.ts';
import { repositoryDocs } from './docs.ts';
import { createHelpService } from './help.ts';
import { assistantRoutes, helpRoutes } from './routes.ts';
import { createAssistantService } from './service.ts';

export const assistantModule = defineModule({
  name: 'assistant',
  routes: ({ services, routes }) => {
    // Built on first search, once every module's routes are declared (their summaries are part of it).
    const docs = repositoryDocs(routes);
    const inference = createInferenceService({ clusters: services.clusters, gateway: services.inferenceGateway, orchestrator: services.deploymentOrchestrator });
    return [
      ...helpRoutes(createHelpService(docs)),
      ...assistantRoutes(createAssistantService({ docs, deployments: services.deployments, costs: services.costs, inference })),
    ];
  },
});
