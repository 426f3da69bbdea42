// GPU clusters: registered or provisioned by platform administrators, and where deployments are placed.
import { createSecretBox } from '../../lib/secret-box.ts';
import { defineModule } from '../module.ts';
import { createClusterEventService, type ClusterEventService } from './events.ts';
import { createClusterOrchestrator } from './orchestrator.ts';
import { clusterRoutes } from './routes.ts';
import { createClusterService, type ClusterService } from './service.ts';

declare module '../module.ts' {
  interface Services { clusters: ClusterService; clusterEvents: ClusterEventService }
}

export const clustersModule = defineModule({
  name: 'clusters',
  services: ({ key, temporal, services, log, cursors }) => ({
    clusterEvents: createClusterEventService({ cursors }),
    clusters: createClusterService({
      secrets: createSecretBox(key('cluster-kubeconfigs')), orchestrator: createClusterOrchestrator(temporal), circuits: services.circuits, log,
    }),
  }),
  routes: ({ services }) => clusterRoutes(services.clusters, services.clusterEvents),
});
