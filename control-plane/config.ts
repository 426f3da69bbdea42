// Configuration from the environment, validated once at start-up, with safe defaults for a laptop. One schema:
// the settings every process shares, and a section per role (the API, the worker, the inference gateway); each
// process reads only its own role's variables, so a worker needs no mail settings and the API no Pulumi passphrase.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { MeteringSettings } from '../workflows/contract/metering.ts';

/** Where `npm run build:web` writes the dashboard: beside this folder, whatever the working directory. */
export const WEB_DIST = resolve(import.meta.dirname, '../web/dist');
/** Where `npm run build:docs` writes the documentation site (VitePress's own output folder). */
export const DOCS_DIST = resolve(import.meta.dirname, '../docs/.vitepress/dist');

// A TCP port of a server on 127.0.0.1.
const port = z.coerce.number().int().min(1).max(65535);

// Read by the API and the gateway alike.
const trustProxy = z.enum(['true', 'false']).default('false')
  .describe('true behind a load balancer: the client address (per-address rate limits, audit) comes from X-Forwarded-For.');

// Each variable's description is its reference entry: docs/reference/configuration.md is generated from these
// schemas (npm run docs:reference).
export const Shared = z.object({
  KILN_ENV: z.enum(['development', 'production']).default('development')
    .describe('development or production. Production requires KILN_SIGNING_KEY, SMTP_URL (API) and PULUMI_CONFIG_PASSPHRASE (worker), refuses webhook, single sign-on, secret-test and cluster addresses on private networks, and issues sk_live_... API keys (sk_test_... in development); a key of the other environment is refused.'),
  DATA_DIR: z.string().min(1).default('./.data')
    .describe('The embedded database, the worker\'s workflow bundles and Pulumi workspace folders and, in development, the generated secrets (signing-key, pulumi-passphrase). Each host\'s own: no process reads what another host wrote there, so processes on several hosts take KILN_SIGNING_KEY (and workers PULUMI_CONFIG_PASSPHRASE) from their environment, the same everywhere.'),
  KILN_SIGNING_KEY: z.string().min(32).optional()
    .describe('The secret the JWT and pagination-cursor keys are derived from (HKDF). Required in production; in development generated once and kept in DATA_DIR.'),
  KILN_SECRETS_KEY: z.string().min(32).optional()
    .describe('Seals organizations\' secrets (/v1/secrets): the API seals, the worker opens, so give both the same. The signing key when unset.'),
  KILN_SECRETS_PREVIOUS_KEYS: z.string().default('').transform((s) => s.split(',').map((k) => k.trim()).filter(Boolean))
    .refine((keys) => keys.every((k) => k.length >= 32), 'each key at least 32 characters')
    .describe('Comma-separated earlier values of KILN_SECRETS_KEY, each at least 32 characters: secrets sealed under them still open, and every API replica re-seals them under the current key in the background.'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info')
    .describe('The pino log level (silent to mute).'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional()
    .describe('The PostgreSQL database (postgres://user:pass@host:port/db). Required by the worker and npm run gateway; unset, npm start and npm run api run embedded PostgreSQL under DATA_DIR.'),
  KILN_POSTGRES_PORT: port.default(54329)
    .describe('Where npm start and npm run api run their embedded PostgreSQL (127.0.0.1) when DATABASE_URL is unset.'),
  KILN_TEMPORAL_PORT: port.default(7233)
    .describe('The port of the Temporal dev server npm start runs (127.0.0.1) when TEMPORAL_ADDRESS is unset.'),
  KILN_TEMPORAL_UI_PORT: port.default(8233)
    .describe('The port of that Temporal dev server\'s Web UI.'),
  KILN_PROMETHEUS_PORT: port.default(9090)
    .describe('The port of the Prometheus npm start runs (127.0.0.1) when PROMETHEUS_URL is unset.'),
  KILN_STRIPE_MOCK_PORT: port.default(12111)
    .describe('The HTTP port of the stripe-mock npm start runs (HTTPS on the next port) when STRIPE_SECRET_KEY is unset.'),
  KILN_GPU_CLUSTER_PORT: port.default(16440)
    .describe('The first of four ports npm start\'s local cluster takes (etcd, etcd peer, API server, kwok).'),
  KILN_GPU_CLUSTER_POD_NETWORK: z.coerce.number().int().min(64).max(127).default(64)
    .describe('N of the local cluster\'s pod addresses, 127.N.0.0/16 on loopback, kept across restarts; another N runs a second cluster beside it.'),
  TEMPORAL_ADDRESS: z.string().regex(/^[^\s/:]+:\d+$/, 'host:port').default('127.0.0.1:7233')
    .describe('host:port of the Temporal frontend.'),
  KILN_METRICS_TOKEN: z.string().min(32).optional()
    .describe('The Bearer token a scraper sends for GET /metrics/internal of the API and the worker; unset, neither serves it.'),
  PROMETHEUS_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:9090')
    .describe('The Prometheus the metric routes, the costs, the autoscaler and the alert rules query.'),
});

export const Sections = {
  api: z.object({
    PORT: z.coerce.number().int().min(0).max(65535).default(8080)
      .describe('The API\'s HTTP port.'),
    KILN_ADMIN_EMAILS: z.string().default('')
      .describe('Comma-separated e-mail addresses (case-insensitive) of the platform administrators, who alone reach the /v1/admin routes.'),
    KILN_ENDPOINT_DOMAIN: z.string().regex(/^[a-z0-9.-]+$/).default('endpoints.kiln.localhost')
      .describe('The domain of deployments\' endpoints (https://<deployment id>.<domain>).'),
    KILN_TRUST_PROXY: trustProxy,
    ERROR_TRACKER_URL: z.url({ protocol: /^https?$/ }).optional()
      .describe('An external error tracker: each unhandled error is also POSTed there as JSON.'),
    SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional()
      .describe('Outgoing mail (invitations, address confirmations, notices): smtp://user:pass@host:587 or smtps://...:465. Required in production; unset, messages are logged.'),
    MAIL_FROM: z.string().min(3).default('Kiln <no-reply@kiln.localhost>')
      .describe('The sender of Kiln\'s e-mail.'),
    KILN_PUBLIC_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8080')
      .describe('Where users reach Kiln: the links in e-mails start with it.'),
    KILN_TEMPORAL_UI_URL: z.url({ protocol: /^https?$/ }).optional()
      .describe('The Temporal Web UI SREs open (npm start sets its dev server\'s): failed deployments link to their workflow there.'),
    KILN_HF_ENDPOINT: z.url({ protocol: /^https?$/ }).default('https://huggingface.co')
      .describe('The Hugging Face Hub (or a mirror) asked for the facts of models outside Kiln\'s catalog.'),
    KILN_HF_TOKEN: z.string().min(1).optional()
      .describe('A Hub token to read gated models\' config.json; unset, their facts stay partly unknown.'),
    KILN_HF_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000)
      .describe('How long one Hub lookup may take, so that a Hub that hangs answers 503 quickly.'),
    STRIPE_SECRET_KEY: z.string().regex(/^(sk|rk)_(test|live)_\w+$/, 'a Stripe secret or restricted key (sk_live_..., sk_test_...)').optional()
      .describe('Stripe\'s secret or restricted key, for checkout, the customer portal and the payment webhooks. Unset, those routes answer 503 PAYMENTS_UNAVAILABLE and the rest of Kiln works.'),
    STRIPE_API_BASE: z.url({ protocol: /^https?$/ }).default('https://api.stripe.com')
      .describe('Stripe\'s API (protocol, host and port), or the local stand-in npm start runs.'),
    STRIPE_WEBHOOK_SECRET: z.string().min(8).optional()
      .describe('Verifies the events Stripe sends to POST /v1/payprovider/webhook (checkouts). Required with STRIPE_SECRET_KEY.'),
    STRIPE_BILLING_WEBHOOK_SECRET: z.string().min(8).optional()
      .describe('Verifies the events Stripe sends to POST /v1/billing/webhook (subscriptions, invoices); STRIPE_WEBHOOK_SECRET when unset.'),
    KILN_BILLING_RETURN_URL: z.url({ protocol: /^https?$/ }).optional()
      .describe('Where Stripe\'s checkout and portal pages send the user back; KILN_PUBLIC_URL/billing when unset.'),
    KILN_WS_HEARTBEAT_SECONDS: z.coerce.number().min(0.05).max(3600).default(30)
      .describe('How often each live-update socket (GET /v1/ws) is pinged; a peer that missed one pong is dropped.'),
    KILN_WS_MAX_BUFFERED_BYTES: z.coerce.number().int().min(1024).max(256 * 1024 * 1024).default(1024 * 1024)
      .describe('How much a live-update socket may have unsent before it is closed (4008).'),
    KILN_WS_REPLAY_LIMIT: z.coerce.number().int().min(1).max(10_000).default(500)
      .describe('The most missed events a reconnect replays; a client that missed more is told to refetch.'),
    KILN_WS_RETENTION_SECONDS: z.coerce.number().int().min(60).max(7 * 86_400).default(3600)
      .describe('How long the live-event log keeps an event.'),
    KILN_WS_MAX_EVENTS: z.coerce.number().int().min(1000).max(10_000_000).default(100_000)
      .describe('How many events the live-event log keeps at most.'),
    KILN_WS_TICKET_SECONDS: z.coerce.number().int().min(5).max(600).default(30)
      .describe('How long a browser\'s single-use live-update ticket lives.'),
    KILN_WEB_DIST: z.string().default(WEB_DIST)
      .describe('The web dashboard\'s built files (npm run build:web), served at /; empty: no dashboard is served.'),
    KILN_DOCS_DIST: z.string().default(DOCS_DIST)
      .describe('The documentation site\'s built files (npm run build:docs), served at /docs; empty: no documentation is served.'),
  }),
  worker: z.object({
    PULUMI_BACKEND_URL: z.string().regex(/^[a-z][a-z0-9+]*:\/\/\S+$/, 'a URL such as s3://bucket').optional()
      .describe('Pulumi\'s state backend (postgres://...?table=..., file://, s3://, https://api.pulumi.com ...); unset, the table pulumi_state in Kiln\'s own database (DATABASE_URL), which Kiln\'s migrations make. npm run pulumi:migrate-state moves a file backend\'s stacks there.'),
    PULUMI_CONFIG_PASSPHRASE: z.string().min(1).optional()
      .describe('Encrypts stack secrets (Pulumi\'s passphrase secrets provider). Required in production; in development generated once and kept in DATA_DIR.'),
    PULUMI_HOME: z.string().min(1).optional()
      .describe('Where Pulumi plugins are installed; Pulumi\'s own default (~/.pulumi) when unset. npm start uses Kiln\'s tools cache.'),
    KILN_PULUMI_CLI_ROOT: z.string().min(1).optional()
      .describe('The folder the Pulumi CLI is installed in (holding bin/pulumi); the pulumi on PATH when unset.'),
    KILN_PULUMI_CONCURRENCY: z.coerce.number().int().min(1).max(256).optional()
      .describe('How many Pulumi operations a worker runs at once (the rest wait their turn); unset, one per core, at least 2.'),
    KILN_PULUMI_OPERATIONS_PER_PROCESS: z.coerce.number().int().min(1).max(10_000).optional()
      .describe('How many operations one warm operation process runs before a fresh one replaces it (1: a fresh process for each); unset, the operation pool\'s default.'),
    KILN_WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464)
      .describe('The port of the worker\'s own GET /metrics/internal, opened only with KILN_METRICS_TOKEN; 0 takes a free port.'),
    KILN_AUTOSCALE_INTERVAL_SECONDS: z.coerce.number().min(1).max(600).default(10)
      .describe('How often the autoscaler reads each autoscaled deployment\'s load from Prometheus.'),
    KILN_UNSCHEDULABLE_GRACE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60)
      .describe('How long a rollout\'s pods may wait for GPUs (unschedulable) before a node pool of a local cluster grows for them, or, when none can, the deployment fails with the scheduler\'s reason; time while the cluster is scaling does not count. Long enough for a cluster autoscaler to add a node.'),
    KILN_POOL_IDLE_SECONDS: z.coerce.number().int().min(1).max(604_800).default(600)
      .describe('How long a node of a local cluster\'s node pool may run no Kiln replica before it is drained and removed, down to the pool\'s minSize (its cluster\'s workflow checks every tenth of it, at most every minute).'),
    KILN_ALERT_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(15)
      .describe('Seconds between two evaluations of every alert rule.'),
    KILN_OPTIMIZATION_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300)
      .describe('Seconds between two passes of optimization auto-apply.'),
    KILN_METERING_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600)
      .describe('The interval metering closes usage in and draws it from credits.'),
    KILN_METERING_SETTLE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(60)
      .describe('How long after an interval\'s end metering waits for late status records before closing it.'),
    KILN_CREDITS_GRACE_SECONDS: z.coerce.number().int().min(0).max(30 * 86_400).default(86_400)
      .describe('How long an organization\'s deployments run on after its credits ran out, before they are stopped.'),
  }),
  gateway: z.object({
    KILN_GATEWAY_PORT: z.coerce.number().int().min(0).max(65535).default(8081)
      .describe('The inference gateway\'s HTTP port (npm run gateway, and the gateway npm start runs); 0 takes a free port.'),
    KILN_TRUST_PROXY: trustProxy,
  }),
};
export type Role = keyof typeof Sections;

export interface LocalPorts {
  readonly temporal: number;
  readonly temporalUi: number;
  readonly prometheus: number;
  /** Its HTTP port; its HTTPS port is the next one. */
  readonly stripeMock: number;
  /** The first of the local cluster's four ports. */
  readonly gpuCluster: number;
  /** N of the local cluster's pod addresses, 127.N.0.0/16. */
  readonly gpuClusterPodNetwork: number;
}

export interface SharedConfig {
  readonly env: 'development' | 'production';
  readonly dataDir: string;
  readonly signingKey: string;
  /** The secret organizations' secrets are sealed under, and the ones they may still be sealed under (rotation). */
  readonly secretsKeys: { readonly current: string; readonly previous: readonly string[] };
  readonly logLevel: string;
  /** Unset: npm start and npm run api start embedded PostgreSQL under dataDir, on embeddedPostgresPort. */
  readonly databaseUrl: string | undefined;
  readonly embeddedPostgresPort: number;
  /** The ports of the servers npm start runs itself (127.0.0.1), each when its address setting is unset. */
  readonly localPorts: LocalPorts;
  /** host:port of the Temporal frontend. */
  readonly temporalAddress: string;
  /** The bearer token GET /metrics/internal asks for; unset: Kiln's own metrics are not served. */
  readonly metricsToken: string | undefined;
  /** Base URL of the Prometheus the metric routes, the autoscaler and the alert rules query. */
  readonly prometheusUrl: string;
}

export interface ApiConfig extends SharedConfig {
  readonly port: number;
  readonly adminEmails: readonly string[];
  readonly endpointDomain: string;
  readonly trustProxy: boolean;
  readonly errorTrackerUrl: string | undefined;
  /** Unset: mail is written to the log instead of sent (refused in production). */
  readonly smtpUrl: string | undefined;
  readonly mailFrom: string;
  readonly publicUrl: string;
  /** The Hugging Face Hub (or a mirror) model facts are read from, its token and how long a lookup may take. */
  /** The Temporal Web UI's base URL (workflow links for SREs); unset: no links. */
  readonly temporalUiUrl: string | undefined;
  readonly hub: { readonly endpoint: string; readonly token: string | undefined; readonly timeoutMs: number };
  /** Stripe; undefined (no STRIPE_SECRET_KEY): the payment routes answer 503. */
  readonly stripe: StripeSettings | undefined;
  /** The live-updates socket (control-plane/live-updates/). */
  readonly liveUpdates: LiveUpdatesSettings;
  /** The folder of the dashboard's build (web/dist), served at /; undefined: none is served. */
  readonly webDist: string | undefined;
  /** The folder of the documentation site's build (docs/.vitepress/dist), served at /docs; undefined: none is served. */
  readonly docsDist: string | undefined;
}

export interface LiveUpdatesSettings {
  readonly heartbeatMs: number;
  /** A socket with more unsent than this is closed with 4008. */
  readonly maxBufferedBytes: number;
  /** Most events a reconnect replays; more missed: the client is told to refetch. */
  readonly replayLimit: number;
  readonly retentionSeconds: number;
  readonly maxEvents: number;
  readonly ticketSeconds: number;
}

export interface StripeSettings {
  readonly secretKey: string;
  /** Stripe's API (or the local stand-in): protocol, host and port. */
  readonly apiBase: string;
  /** Verifies POST /v1/payprovider/webhook. */
  readonly webhookSecret: string;
  /** Verifies POST /v1/billing/webhook. */
  readonly billingWebhookSecret: string;
  /** The page checkout and the portal return to; checkout adds `?checkout=success|cancelled`. */
  readonly returnUrl: string;
}

/** The API's configuration, as app.ts takes it. */
export type Config = ApiConfig;

export interface WorkerConfig extends SharedConfig {
  /** The worker starts no PostgreSQL of its own. */
  readonly databaseUrl: string;
  readonly pulumiBackendUrl: string;
  readonly pulumiPassphrase: string;
  /** PULUMI_HOME; Pulumi's default when unset. */
  readonly pulumiHome: string | undefined;
  /** Folder of the Pulumi CLI; the one on PATH when unset. */
  readonly pulumiCliRoot: string | undefined;
  /** Pulumi operations a worker runs at once; the operation pool's default when unset. */
  readonly pulumiConcurrency: number | undefined;
  /** Operations one operation process runs before it is replaced; the operation pool's default when unset. */
  readonly pulumiOperationsPerProcess: number | undefined;
  /** Development delivers webhooks to loopback and private addresses; production refuses them. */
  readonly allowPrivateWebhookUrls: boolean;
  /** Port of the worker's /metrics/internal listener (only with metricsToken); 0: a free one. */
  readonly metricsPort: number;
  /** How often the autoscaler measures a deployment's load. */
  readonly autoscaleIntervalMs: number;
  /** How long pods may stay unschedulable before their deployment fails. */
  readonly unschedulableGraceMs: number;
  /** How long a node of a local cluster's pool may run no Kiln replica before it is removed. */
  readonly poolIdleMs: number;
  /** Seconds between two passes of alert evaluation. */
  readonly alertIntervalSeconds: number;
  /** Seconds between two passes of optimization auto-apply. */
  readonly optimizationIntervalSeconds: number;
  /** Metering's interval, settling time and the credits' grace period, in milliseconds. */
  readonly metering: MeteringSettings;
}

/** The inference gateway's (gateway/): it serves the inference routes from the same database as the API. */
export interface GatewayConfig extends SharedConfig {
  readonly port: number;
  readonly trustProxy: boolean;
}

interface RoleConfig { api: ApiConfig; worker: WorkerConfig; gateway: GatewayConfig }

export class ConfigError extends Error {}

/** For a process's entry point: a ConfigError is the user's to fix, so its message alone, and exit 1. */
export function exitOnConfigError(error: unknown): never {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}

/**
 * For a process's entry point: a start that failed says so in one line and exits 1. A port in use names the
 * setting that moves it; any other failure its message.
 */
export function exitOnStartError(server: string, port: number, setting: string): (error: NodeJS.ErrnoException) => never {
  return (error) => {
    console.error(error.code === 'EADDRINUSE'
      ? `failed to start: ${server} cannot listen on port ${port}: it is in use. Stop what holds it, or set ${setting} to a free port`
      : `failed to start: ${error.message}`);
    process.exit(1);
  };
}

/** For a process's entry point: Ctrl-C or SIGTERM (a supervisor's stop) runs `stop`, then the process exits 0. */
export function exitOnSignals(stop: () => Promise<unknown>): void {
  const exit = () => void stop().then(() => process.exit(0));
  process.once('SIGINT', exit);
  process.once('SIGTERM', exit);
}

const required = (name: string, when = 'when KILN_ENV=production') => new ConfigError(`invalid configuration: ${name} is required ${when}`);

/** One parse of the shared settings and the role's section: every invalid variable named at once. */
function parse<T extends z.ZodType>(schema: T, env: NodeJS.ProcessEnv): z.infer<T> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) throw new ConfigError(`invalid configuration: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export async function loadConfig<R extends Role>(role: R, env: NodeJS.ProcessEnv = process.env): Promise<RoleConfig[R]> {
  const configs: { [K in Role]: () => Promise<RoleConfig[K]> } = {
    api: () => apiConfig(parse(Shared.extend(Sections.api.shape), env)),
    worker: () => workerConfig(parse(Shared.extend(Sections.worker.shape), env)),
    gateway: () => gatewayConfig(parse(Shared.extend(Sections.gateway.shape), env)),
  };
  return configs[role]() as Promise<RoleConfig[R]>;
}

async function sharedConfig(e: z.infer<typeof Shared>): Promise<SharedConfig> {
  if (e.KILN_ENV === 'production' && !e.KILN_SIGNING_KEY) throw required('KILN_SIGNING_KEY');
  const dataDir = resolve(e.DATA_DIR);
  const signingKey = e.KILN_SIGNING_KEY ?? (await developmentSecret(dataDir, 'signing-key'));
  return {
    env: e.KILN_ENV,
    dataDir,
    signingKey,
    secretsKeys: { current: e.KILN_SECRETS_KEY ?? signingKey, previous: e.KILN_SECRETS_PREVIOUS_KEYS },
    logLevel: e.LOG_LEVEL,
    databaseUrl: e.DATABASE_URL,
    embeddedPostgresPort: e.KILN_POSTGRES_PORT,
    localPorts: {
      temporal: e.KILN_TEMPORAL_PORT, temporalUi: e.KILN_TEMPORAL_UI_PORT, prometheus: e.KILN_PROMETHEUS_PORT,
      stripeMock: e.KILN_STRIPE_MOCK_PORT, gpuCluster: e.KILN_GPU_CLUSTER_PORT, gpuClusterPodNetwork: e.KILN_GPU_CLUSTER_POD_NETWORK,
    },
    temporalAddress: e.TEMPORAL_ADDRESS,
    metricsToken: e.KILN_METRICS_TOKEN,
    prometheusUrl: e.PROMETHEUS_URL.replace(/\/+$/, ''),
  };
}

async function apiConfig(e: z.infer<typeof Shared> & z.infer<typeof Sections.api>): Promise<ApiConfig> {
  const common = await sharedConfig(e);
  // A logged message would put invitation tokens in production logs.
  if (e.KILN_ENV === 'production' && !e.SMTP_URL) throw required('SMTP_URL');
  // Payments without their webhooks would take money and never credit it.
  if (e.STRIPE_SECRET_KEY && !e.STRIPE_WEBHOOK_SECRET) throw required('STRIPE_WEBHOOK_SECRET', 'with STRIPE_SECRET_KEY');
  const publicUrl = e.KILN_PUBLIC_URL.replace(/\/+$/, '');
  return {
    ...common,
    port: e.PORT,
    adminEmails: e.KILN_ADMIN_EMAILS.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean),
    endpointDomain: e.KILN_ENDPOINT_DOMAIN,
    trustProxy: e.KILN_TRUST_PROXY === 'true',
    errorTrackerUrl: e.ERROR_TRACKER_URL,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    publicUrl,
    temporalUiUrl: e.KILN_TEMPORAL_UI_URL?.replace(/\/+$/, ''),
    hub: { endpoint: e.KILN_HF_ENDPOINT.replace(/\/+$/, ''), token: e.KILN_HF_TOKEN, timeoutMs: e.KILN_HF_TIMEOUT_MS },
    stripe: e.STRIPE_SECRET_KEY ? {
      secretKey: e.STRIPE_SECRET_KEY,
      apiBase: e.STRIPE_API_BASE.replace(/\/+$/, ''),
      webhookSecret: e.STRIPE_WEBHOOK_SECRET!,
      billingWebhookSecret: e.STRIPE_BILLING_WEBHOOK_SECRET ?? e.STRIPE_WEBHOOK_SECRET!,
      returnUrl: e.KILN_BILLING_RETURN_URL ?? `${publicUrl}/billing`,
    } : undefined,
    liveUpdates: {
      heartbeatMs: Math.round(e.KILN_WS_HEARTBEAT_SECONDS * 1000), maxBufferedBytes: e.KILN_WS_MAX_BUFFERED_BYTES, replayLimit: e.KILN_WS_REPLAY_LIMIT,
      retentionSeconds: e.KILN_WS_RETENTION_SECONDS, maxEvents: e.KILN_WS_MAX_EVENTS, ticketSeconds: e.KILN_WS_TICKET_SECONDS,
    },
    webDist: e.KILN_WEB_DIST ? resolve(e.KILN_WEB_DIST) : undefined,
    docsDist: e.KILN_DOCS_DIST ? resolve(e.KILN_DOCS_DIST) : undefined,
  };
}

async function workerConfig(e: z.infer<typeof Shared> & z.infer<typeof Sections.worker>): Promise<WorkerConfig> {
  const common = await sharedConfig(e);
  if (!e.DATABASE_URL) throw required('DATABASE_URL', 'by the worker');
  // A passphrase generated on one machine would lock production stacks' secrets to its disk.
  if (e.KILN_ENV === 'production' && !e.PULUMI_CONFIG_PASSPHRASE) throw required('PULUMI_CONFIG_PASSPHRASE');
  return {
    ...common,
    databaseUrl: e.DATABASE_URL,
    pulumiBackendUrl: e.PULUMI_BACKEND_URL ?? pulumiStateInDatabase(e.DATABASE_URL),
    pulumiPassphrase: e.PULUMI_CONFIG_PASSPHRASE ?? (await developmentSecret(common.dataDir, 'pulumi-passphrase')),
    pulumiHome: e.PULUMI_HOME,
    pulumiCliRoot: e.KILN_PULUMI_CLI_ROOT,
    pulumiConcurrency: e.KILN_PULUMI_CONCURRENCY,
    pulumiOperationsPerProcess: e.KILN_PULUMI_OPERATIONS_PER_PROCESS,
    allowPrivateWebhookUrls: common.env !== 'production',
    metricsPort: e.KILN_WORKER_METRICS_PORT,
    autoscaleIntervalMs: e.KILN_AUTOSCALE_INTERVAL_SECONDS * 1000,
    unschedulableGraceMs: e.KILN_UNSCHEDULABLE_GRACE_SECONDS * 1000,
    poolIdleMs: e.KILN_POOL_IDLE_SECONDS * 1000,
    alertIntervalSeconds: e.KILN_ALERT_INTERVAL_SECONDS,
    optimizationIntervalSeconds: e.KILN_OPTIMIZATION_INTERVAL_SECONDS,
    metering: { intervalMs: e.KILN_METERING_INTERVAL_SECONDS * 1000, settleMs: e.KILN_METERING_SETTLE_SECONDS * 1000, graceMs: e.KILN_CREDITS_GRACE_SECONDS * 1000 },
  };
}

async function gatewayConfig(e: z.infer<typeof Shared> & z.infer<typeof Sections.gateway>): Promise<GatewayConfig> {
  return { ...await sharedConfig(e), port: e.KILN_GATEWAY_PORT, trustProxy: e.KILN_TRUST_PROXY === 'true' };
}

/**
 * Pulumi's PostgreSQL state backend in Kiln's own database, in the table pulumi_state (its migration makes it,
 * with no grant to kiln_tenant). The CLI's driver (Go's lib/pq) asks for TLS unless told otherwise, node-postgres
 * only when told: the CLI connects as Kiln does, so with sslmode=disable unless DATABASE_URL names TLS.
 */
export function pulumiStateInDatabase(databaseUrl: string): string {
  const url = new URL(databaseUrl.replace(/^postgresql:/, 'postgres:'));
  // node-postgres's `ssl=true` is `sslmode=require` to lib/pq, which would send `ssl` to the server as a setting.
  const ssl = url.searchParams.get('ssl');
  url.searchParams.delete('ssl');
  if (!url.searchParams.has('sslmode')) url.searchParams.set('sslmode', ssl === 'true' || ssl === '1' ? 'require' : 'disable');
  url.searchParams.set('table', 'pulumi_state');
  return url.toString();
}

/**
 * Development only: a secret generated once and kept in DATA_DIR (the signing key, the Pulumi passphrase),
 * so sessions and stack secrets survive restarts.
 */
export async function developmentSecret(dataDir: string, name: string): Promise<string> {
  const file = join(dataDir, name);
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32).toString('base64url');
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return (await readFile(file, 'utf8')).trim();
}
