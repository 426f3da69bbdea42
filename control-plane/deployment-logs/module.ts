// Deployment logs: the pods' logs, read through the Kubernetes pod-log API of each deployment's cluster.
import { defineModule } from '../module.ts';
import { deploymentLogRoutes } from './routes.ts';
import { createDeploymentLogsService, type DeploymentLogsService } from './service.ts';

declare module '../module.ts' {
  interface Services { deploymentLogs: DeploymentLogsService }
}

export const deploymentLogsModule = defineModule({
  name: 'deployment-logs',
  services: ({ services, log }) => ({ deploymentLogs: createDeploymentLogsService({ clusters: services.clusters, log }) }),
  routes: ({ services }) => deploymentLogRoutes(services.deploymentLogs),
});
