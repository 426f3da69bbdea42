// Kiln's three processes as its image runs them: the command, the port each listens on and the setting that
// names it, the health routes its probes call, and which of the component's secret settings it reads.

export type KilnProcessName = 'api' | 'worker' | 'gateway';

/** The settings the component keeps in its Secret, by the environment variable each process reads. */
export const SECRET_SETTINGS = {
  databaseUrl: 'DATABASE_URL',
  signingKey: 'KILN_SIGNING_KEY',
  pulumiPassphrase: 'PULUMI_CONFIG_PASSPHRASE',
  metricsToken: 'KILN_METRICS_TOKEN',
  smtpUrl: 'SMTP_URL',
} as const;
export type SecretArg = keyof typeof SECRET_SETTINGS;

export interface KilnProcess {
  /** The container's command, from the image's working directory. */
  readonly command: readonly string[];
  /** The HTTP port: the setting that moves it, its number and name (a Service's targetPort). */
  readonly port?: { readonly env: string; readonly number: number; readonly name: string };
  /** Whether it serves `/v1/health/live` and `/v1/health/ready` on that port. */
  readonly health: boolean;
  /** The secret settings it reads (each only when given). */
  readonly secrets: readonly SecretArg[];
}

/** Liveness: 200 whenever the process answers. Readiness: each dependency's state (the API answers 503 without its database). */
export const HEALTH_PATHS = { live: '/v1/health/live', ready: '/v1/health/ready' } as const;

/** Where the worker serves GET /metrics/internal when it has KILN_METRICS_TOKEN (its default port). */
export const WORKER_METRICS_PORT = { env: 'KILN_WORKER_METRICS_PORT', number: 9464, name: 'metrics' } as const;

export const KILN_PROCESSES: Readonly<Record<KilnProcessName, KilnProcess>> = {
  api: {
    command: ['node', 'control-plane/main.ts'],
    port: { env: 'PORT', number: 8080, name: 'http' },
    health: true,
    secrets: ['databaseUrl', 'signingKey', 'smtpUrl', 'metricsToken'],
  },
  // The worker serves no health route: a worker that loses PostgreSQL or Temporal retries until they return,
  // and one that fails exits, which restarts its container.
  worker: {
    command: ['node', 'workflows/worker.ts'],
    health: false,
    secrets: ['databaseUrl', 'signingKey', 'pulumiPassphrase', 'metricsToken'],
  },
  gateway: {
    command: ['node', 'gateway/main.ts'],
    port: { env: 'KILN_GATEWAY_PORT', number: 8081, name: 'http' },
    health: true,
    secrets: ['databaseUrl', 'signingKey', 'metricsToken'],
  },
};
