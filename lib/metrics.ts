// What both processes need to expose Kiln's own metrics (GET /metrics/internal) in Prometheus text: a registry
// with prom-client's process metrics, and the check of the scraper's token (KILN_METRICS_TOKEN), which is no
// user's credential. The API's metrics are made in control-plane/observability/, the worker's in
// workflows/metrics.ts, each on one registry of its own.
import { createHash, timingSafeEqual } from 'node:crypto';
import { collectDefaultMetrics, Registry } from 'prom-client';

/** Prometheus' text exposition format, as prom-client writes it. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** A registry holding prom-client's default process metrics (CPU, memory, event loop, GC), unprefixed. */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Whether an Authorization header is `Bearer <token>`. Compared in constant time over the digests, so
 * neither the token's characters nor its length leak through the answer's timing.
 */
export function metricsTokenMatches(authorization: string, token: string): boolean {
  const match = /^Bearer (\S+)$/i.exec(authorization);
  return timingSafeEqual(digest(match?.[1] ?? ''), digest(token)) && match !== null;
}
