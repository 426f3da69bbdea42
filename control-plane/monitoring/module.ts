// Monitoring: deployments' metrics, read from Prometheus (PROMETHEUS_URL), which scrapes the model servers.
import { defineModule } from '../module.ts';
import { createPrometheusClient, type PrometheusClient } from '../../lib/prometheus/client.ts';
import { monitoringRoutes } from './routes.ts';
import { createMonitoringService, type MonitoringService } from './service.ts';

declare module '../module.ts' {
  interface Services {
    /** The one client of PROMETHEUS_URL's HTTP API: the metric, cost and dashboard routes query through it. */
    prometheus: PrometheusClient;
    monitoring: MonitoringService;
  }
}

export const monitoringModule = defineModule({
  name: 'monitoring',
  services: ({ config }) => {
    const prometheus = createPrometheusClient(config.prometheusUrl);
    return { prometheus, monitoring: createMonitoringService({ prometheus }) };
  },
  routes: ({ services }) => monitoringRoutes(services.monitoring),
});
