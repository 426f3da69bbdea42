// The API process's own metrics, on one registry made here for each app (one per API process; a test's
// several apps each count their own): requests by route template and status, and the credential cache's
// hits. GET /metrics/internal (routes.ts) serves them with prom-client's process metrics.
import { Counter, Histogram, type Registry } from 'prom-client';
import { createMetricsRegistry } from '../../lib/metrics.ts';

/** Up to a minute: an export or an inference stream runs longer, and is then counted in +Inf. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export interface ApiMetrics {
  readonly registry: Registry;
  /** One request answered: `route` is its declared path (`/api/deployments/{id}`) or `unmatched`, so labels stay few. */
  request(labels: { method: string; route: string; status: number }, seconds: number): void;
  /** One credential lookup through the cache (auth/credential-cache.ts). */
  credentialLookup(result: 'hit' | 'miss'): void;
}

export function createApiMetrics(): ApiMetrics {
  const registry = createMetricsRegistry();
  const registers = [registry];
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'kiln_http_requests_total', help: 'Requests answered, by method, route template and status.', labelNames, registers });
  const durations = new Histogram({
    name: 'kiln_http_request_duration_seconds', help: 'Time from a request\'s arrival to its answer\'s head, by method, route template and status.',
    labelNames, buckets: DURATION_BUCKETS, registers,
  });
  const credentials = new Counter({
    name: 'kiln_credential_cache_requests_total', help: 'Credential lookups (API keys, memberships) answered from this process\'s cache (hit) or the database (miss).',
    labelNames: ['result'] as const, registers,
  });
  return {
    registry,
    request({ method, route, status }, seconds) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      durations.observe(labels, seconds);
    },
    credentialLookup: (result) => credentials.inc({ result }),
  };
}
