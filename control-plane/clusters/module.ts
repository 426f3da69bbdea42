// GPU clusters: registered or provisioned by platform administrators, and where deployments are placed.
import { createSecretBox } from '../../lib/secret-box.ts';
import { defineModule } from '../module.ts';
import { clusterRoutes } from './routes.ts';
import { createClusterService, type ClusterService } from './service.ts';

declare module '../module.ts' {
  interface Services { clusters: ClusterService }
}

export const clustersModule = defineModule({
  name: 'clusters',
  services: ({ key, clusterOrchestrator, services, log }) => ({
    clusters: createClusterService({
      secrets: createSecretBox(key('cluster-kubeconfigs')), orchestrator: clusterOrchestrator, circuits: services.circuits, log,
    }),
  }),
  routes: ({ services }) => clusterRoutes(services.clusters),
});
