// A control plane on its own fresh database for one test file, plus small helpers that act like a client.
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type pg from 'pg';
import type { KilnApp } from '../../control-plane/app.ts';
import type { AppDeps } from '../../control-plane/module.ts';
import { loadConfig } from '../../control-plane/config.ts';
import type { Orm } from '../../control-plane/database/orm.ts';
import { isLoopback } from '../../control-plane/inference/gateway.ts';
import { GpuClusterSchema } from '../../control-plane/clusters/gpu-cluster.entity.ts';
import { startApi } from '../../control-plane/server.ts';
import type { GatewayAppDeps } from '../../gateway/app.ts';
import { startGateway } from '../../gateway/server.ts';
import { GPU_TYPES } from '../../catalog/gpu-types.ts';
import { PLANS } from '../../catalog/plans.ts';
import type { DesiredDeployment } from '../../workflows/contract/deployment.ts';
import type { Permission } from '../../control-plane/core/permissions.ts';
import type { Route } from '../../control-plane/http/routes.ts';
import { createTestDatabase } from './database.ts';
import { testTemporalAddress } from './temporal.ts';

export interface TestApi {
  readonly url: string;
  readonly databaseUrl: string;
  /** The application itself, to look at what it registers. */
  readonly app: KilnApp;
  readonly orm: Orm;
  readonly pool: pg.Pool;
  /** Temporal client of the test run's dev server, to look at the workflows the API started. */
  readonly workflows: Client;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read response fields freely
  body: any;
}

/** The cluster startTestApi registers unless told not to: ready, 64 GPUs of every catalog type, no reachable API. */
const TEST_CLUSTER_ID = 'clu_testdefaultcluster0';

export interface TestApiOverrides extends Partial<Pick<AppDeps, 'rateLimits' | 'mail'>> {
  config?: Partial<AppDeps['config']>;
  /** Where the app's orchestrator finds Temporal (the test run's dev server when absent), e.g. a closed port. */
  orchestratorTemporalAddress?: string;
  /** false: no GPU cluster is registered, so every creation is 503 GPU_UNAVAILABLE. */
  defaultCluster?: boolean;
  /** Another test API's database, to run a second replica on it. */
  databaseUrl?: string;
  /** The inference gateway's options; it connects to loopback addresses only unless told otherwise. */
  inference?: AppDeps['inference'];
  /** The app's logger (a test that reads what the app logs); silent when absent. */
  log?: AppDeps['log'];
}

export const TEST_SIGNING_KEY = 'test-signing-key-0123456789abcdefghijklmnop';
/** Rate limits no test reaches unless it sets its own. */
const UNLIMITED = Object.fromEntries(PLANS.map((plan) => [plan, { perMinute: 10_000, burst: 10_000 }])) as NonNullable<AppDeps['rateLimits']>;

export async function startTestApi(testFile: string, overrides: TestApiOverrides = {}): Promise<TestApi> {
  const databaseUrl = overrides.databaseUrl ?? await createTestDatabase(testFile);
  // The configuration as the API validates it, then what the test changes.
  const config = {
    ...await loadConfig('api', {
      DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: overrides.orchestratorTemporalAddress ?? testTemporalAddress(), PORT: '0', LOG_LEVEL: 'silent',
      DATA_DIR: join(process.env.KILN_TEST_DATA_DIR ?? tmpdir(), 'api', basename(testFile)),
      KILN_SIGNING_KEY: TEST_SIGNING_KEY, KILN_ENDPOINT_DOMAIN: 'endpoints.test',
      KILN_ADMIN_EMAILS: 'admin@kiln.test', KILN_PUBLIC_URL: 'http://kiln.test',
      // No Hub unless a test gives one (test/support/hub-recordings.ts): a closed port, refused at once.
      KILN_HF_ENDPOINT: 'http://127.0.0.1:9',
      // No Prometheus unless a test gives one: the metric routes answer 503.
      PROMETHEUS_URL: 'http://127.0.0.1:9',
      // No dashboard unless a test serves one (config.webDist): / and unknown paths stay the API's 404.
      KILN_WEB_DIST: '',
      // Nor documentation (config.docsDist): /docs stays the API's 404.
      KILN_DOCS_DIST: '',
    }),
    ...overrides.config,
    databaseUrl,
  };
  const api = await startApi({
    config,
    host: '127.0.0.1',
    poolSize: 4,
    // No worker runs beside a test API: a dry run's preview waits this long, then says no worker answered.
    previewTimeoutMs: 2_000,
    ...(overrides.log ? { log: overrides.log } : {}),
    overrides: {
      mail: overrides.mail,
      inference: { connectable: isLoopback, ...overrides.inference },
      rateLimits: overrides.rateLimits ?? UNLIMITED,
    },
  });
  const { orm, pool, app, url } = api;
  if ((overrides.defaultCluster ?? true) && !overrides.databaseUrl) {
    await orm.em.fork().insert(GpuClusterSchema, {
      id: TEST_CLUSTER_ID, name: 'test-cluster', provider: 'kubernetes', status: 'ready', gpus: GPU_TYPES.map((g) => ({ gpuType: g.id, count: 64 })),
      createdAt: new Date(), updatedAt: new Date(),
    });
  }
  const temporal = await Connection.connect({ address: testTemporalAddress() });
  const workflows = new Client({ connection: temporal });
  return {
    url,
    databaseUrl,
    app,
    orm,
    pool,
    workflows,
    request: requester(url),
    async close() {
      await api.close();
      await temporal.close();
    },
  };
}

/** Sends requests to `url` as a client would, the answer's body read as JSON when it says it is. */
function requester(url: string): TestApi['request'] {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: !text ? undefined : response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
}

export interface TestGateway {
  readonly url: string;
  request: TestApi['request'];
  close(): Promise<void>;
}

export interface TestGatewayOverrides extends Partial<Pick<GatewayAppDeps, 'rateLimits' | 'inference'>> {
  /** Another database than the API's (one reached through a proxy a test pauses). */
  databaseUrl?: string;
}

/** An inference gateway (gateway/server.ts) on a test API's database, as `npm run gateway` runs it beside the API. */
export async function startTestGateway(api: TestApi, overrides: TestGatewayOverrides = {}): Promise<TestGateway> {
  const config = await loadConfig('gateway', {
    DATABASE_URL: overrides.databaseUrl ?? api.databaseUrl, TEMPORAL_ADDRESS: testTemporalAddress(), KILN_GATEWAY_PORT: '0', LOG_LEVEL: 'silent',
    DATA_DIR: join(process.env.KILN_TEST_DATA_DIR ?? tmpdir(), 'gateway'),
    KILN_SIGNING_KEY: TEST_SIGNING_KEY,
  });
  const gateway = await startGateway({
    config: { ...config, databaseUrl: overrides.databaseUrl ?? api.databaseUrl },
    host: '127.0.0.1',
    overrides: {
      inference: { connectable: isLoopback, ...overrides.inference },
      rateLimits: overrides.rateLimits ?? UNLIMITED,
    },
  });
  return { url: gateway.url, request: requester(gateway.url), close: gateway.close };
}

let counter = 0;

/** The password of every user signup() makes. */
export const TEST_PASSWORD = 'correct horse battery';

/** Signs up a new user with a new organization; answers with the login session. */
export async function signup(api: TestApi, label = 'user') {
  counter += 1;
  const email = `${label}-${counter}-${Date.now()}@example.com`;
  const res = await api.request('POST', '/v1/auth/signup', {
    body: { email, password: TEST_PASSWORD, name: `${label} ${counter}`, organizationName: `${label} org ${counter}` },
  });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { email, password: TEST_PASSWORD, token: res.body.access_token as string, refreshToken: res.body.refresh_token as string, userId: res.body.user.id as string, organizationId: res.body.user.organization_id as string };
}

export async function createApiKey(api: TestApi, token: string, scope: 'full_access' | 'deployments_only' | 'read_only') {
  const res = await api.request('POST', '/v1/settings/api-keys', { token, body: { name: `${scope} key`, scope } });
  if (res.status !== 201) throw new Error(`api key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; key: string; prefix: string };
}

export const validDeployment = (name = 'llama-chat') => ({ name, model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4' });

/** A new user and organization with one deployment (validDeployment), and its id. */
export async function signupWithDeployment(api: TestApi) {
  const user = await signup(api);
  const created = await api.request('POST', '/v1/deployments', { token: user.token, body: validDeployment() });
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body)}`);
  return { ...user, id: created.body.id as string };
}

/** The desired states a deployment's workflow was sent, in order (no worker runs in API tests, so they wait in its history). */
export async function desiredStatesSent(api: TestApi, workflowId: string): Promise<DesiredDeployment[]> {
  const history = await api.workflows.workflow.getHandle(workflowId).fetchHistory();
  const converter = api.workflows.options.loadedDataConverter.payloadConverter;
  return (history.events ?? [])
    .filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'desiredState')
    .map((e) => converter.fromPayload(e.workflowExecutionSignaledEventAttributes!.input!.payloads![0]!) as DesiredDeployment);
}

/**
 * A new user who also belongs to `organizationId` with `role` (built-in name or custom role id), written
 * directly so tests need no invitation flow; `as` sends their session acting in that organization.
 */
export async function addMember(api: TestApi, organizationId: string, role: string, label = role.replace(/_.*/, '')) {
  const user = await signup(api, label);
  await api.pool.query(
    `INSERT INTO membership (id, created_at, organization_id, user_id, role) VALUES ($1, now(), $2, $3, $4)`,
    [`mem_test_${user.userId.slice(4)}`, organizationId, user.userId, role],
  );
  return { ...user, as: { token: user.token, headers: { 'x-organization-id': organizationId } } };
}

/** The permission each route the app serves declares, keyed `<METHOD> <path>` as mounted. */
export function routePermissions(routes: readonly Route[]): Readonly<Record<string, Permission>> {
  return Object.fromEntries(routes.map((route) => [`${route.method} ${route.path}`, route.permission]));
}
