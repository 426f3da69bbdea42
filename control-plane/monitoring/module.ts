// Monitoring: deployments' metrics, read from Prometheus (PROMETHEUS_URL), which scrapes the model servers.
import { defineModule } from '../module.ts';
import { createPrometheusClient } from './prometheus.ts';
import { monitoringRoutes } from './routes.ts';
import { createMonitoringService, type MonitoringService } from './service.ts';

declare module '../module.ts' {
  interface Services { monitoring: MonitoringService }
}

export const monitoringModule = defineModule({
  name: 'monitoring',
  services: ({ config }) => ({ monitoring: createMonitoringService({ prometheus: createPrometheusClient(config.prometheusUrl) }) }),
  routes: ({ services }) => monitoringRoutes(services.monitoring),
});
