// GET /metrics/internal: Kiln's own metrics in Prometheus text, for scrapers holding KILN_METRICS_TOKEN
// (the `internal` permission), never for a user's credential. Served where scrapers look (/metrics/internal)
// and where the reference API's row puts it, under its /v1 base.
import { Readable } from 'node:stream';
import { z } from 'zod';
import { METRICS_CONTENT_TYPE } from '../../lib/metrics.ts';
import { defineRoute, type Route } from '../http/routes.ts';
import type { ApiMetrics } from './metrics.ts';

const PrometheusText = z.string().meta({ description: 'Prometheus text exposition format 0.0.4', example: 'kiln_http_requests_total{method="GET",route="/api/deployments/{id}",status="200"} 3' });

/** Where the metrics are served: the scrapers' path, and the reference row's under /v1. */
export const INTERNAL_METRICS_PATHS = ['/metrics/internal', '/v1/metrics/internal'] as const;

export function observabilityRoutes(metrics: ApiMetrics): Route[] {
  return INTERNAL_METRICS_PATHS.map((path) => defineRoute({
    permission: 'internal', method: 'GET', path, operationId: path.startsWith('/v1/') ? 'internalMetricsV1' : 'internalMetrics', tag: 'Meta', resourceType: 'metrics',
    summary: 'Kiln\'s own metrics (requests by route and status, credential cache, process), for a Prometheus holding KILN_METRICS_TOKEN; '
      + 'no credential is 401; a credential while the token is not set is 503',
    streams: { [METRICS_CONTENT_TYPE]: PrometheusText }, errors: [503],
    handle: async () => ({ stream: Readable.from([await metrics.registry.metrics()]), contentType: METRICS_CONTENT_TYPE }),
  }));
}
