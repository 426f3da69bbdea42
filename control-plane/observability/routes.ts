// GET /metrics/internal: Kiln's own metrics in Prometheus text, for scrapers holding KILN_METRICS_TOKEN
// (the `internal` permission), never for a user's credential.
import { Readable } from 'node:stream';
import { z } from 'zod';
import { METRICS_CONTENT_TYPE } from '../../lib/metrics.ts';
import { defineRoute, type Route } from '../http/routes.ts';
import type { ApiMetrics } from './metrics.ts';

const PrometheusText = z.string().meta({ description: 'Prometheus text exposition format 0.0.4', example: 'kiln_http_requests_total{method="GET",route="/api/deployments/{id}",status="200"} 3' });

export function observabilityRoutes(metrics: ApiMetrics): Route[] {
  return [defineRoute({
    permission: 'internal', method: 'GET', path: '/metrics/internal', operationId: 'internalMetrics', tag: 'Meta', resourceType: 'metrics',
    summary: 'Kiln\'s own metrics (requests by route and status, credential cache, process), for a Prometheus holding KILN_METRICS_TOKEN; 503 when it is not set',
    streams: { [METRICS_CONTENT_TYPE]: PrometheusText }, errors: [503],
    handle: async () => ({ stream: Readable.from([await metrics.registry.metrics()]), contentType: METRICS_CONTENT_TYPE }),
  })];
}
