// GPU clusters: registered or provisioned by platform administrators, and where deployments are placed. The
// module runs the redelivery loop, which sends cluster changes saved while Temporal was away.
import type { Periodic } from '../../lib/periodic.ts';
import { createSecretBox } from '../../lib/secret-box.ts';
import { defineModule } from '../module.ts';
import { createClusterEventService, type ClusterEventService } from './events.ts';
import { clusterDelivery } from './delivery.ts';
import { createClusterOrchestrator } from './orchestrator.ts';
import { clusterRoutes } from './routes.ts';
import { createClusterService, type ClusterService } from './service.ts';

declare module '../module.ts' {
  interface Services {
    clusters: ClusterService;
    clusterEvents: ClusterEventService;
    /** Cluster changes saved while Temporal was unreachable reach their workflows once it answers again. */
    clusterRedelivery: Periodic;
  }
}

export const clustersModule = defineModule({
  name: 'clusters',
  services: ({ key, temporal, services, log, orm, cursors }) => {
    const orchestrator = createClusterOrchestrator(temporal, { temporalAvailable: () => services.dependencies.temporalAvailable() });
    return {
      clusterEvents: createClusterEventService({ cursors }),
      clusters: createClusterService({ secrets: createSecretBox(key('cluster-kubeconfigs')), orchestrator, circuits: services.circuits, log }),
      clusterRedelivery: clusterDelivery({ orchestrator, log }).loop(orm),
    };
  },
  routes: ({ services }) => clusterRoutes(services.clusters, services.clusterEvents),
  start: ({ services }) => services.clusterRedelivery.start(),
  close: ({ clusterRedelivery }) => clusterRedelivery.stop(),
});
