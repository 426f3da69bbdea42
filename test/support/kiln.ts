// Kiln as it runs for real, for end-to-end tests: the API and the worker as processes of their own, started
// the way `npm run api` and `npm run worker` start them (so they can be killed and restarted mid-way), each
// with a DATA_DIR of its own (they share no folder, as on hosts of their own), a
// Temporal dev server of this file's own (its task queues then serve only this file's database, and it can be
// restarted too), and a local GPU cluster with simulated model servers. Tests reach Kiln through its public
// API only; the database is used to set a plan, as an operator would.
import { mkdir, mkdtemp, readFile, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join, resolve } from 'node:path';
import { deriveKey } from '../../lib/keys.ts';
import { createSecretBox } from '../../lib/secret-box.ts';
import { syncKubernetesCluster } from '../../control-plane/clusters/service.ts';
import { openDatabase } from '../../control-plane/database/orm.ts';
import type { GpuCluster, GpuNodePool } from '../../infra/servers/gpu-cluster.ts';
import { freePort, startProcess, waitUntilReady, type ServerProcess } from '../../infra/servers/process.ts';
import { startTemporal, type TemporalServer } from '../../infra/servers/temporal.ts';
import { startPrometheus, type PrometheusServer } from '../../infra/servers/prometheus.ts';
import { createTestDatabase } from './database.ts';
import { eventually } from './eventually.ts';
import { startTestGpuCluster } from './gpu-cluster.ts';
import { testBundleDir } from './temporal.ts';
import { pulumiToolsEnv } from '../../infra/tools/paths.ts';

export interface KilnResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read response fields freely
  body: any;
}

export interface Kiln {
  url(): string;
  readonly cluster: GpuCluster;
  readonly databaseUrl: string;
  /** DATA_DIR of the worker (the Pulumi file backend lives under it), and of this file's servers. */
  readonly dataDir: string;
  /** DATA_DIR of the API: a folder apart from the worker's, as on hosts of their own. */
  readonly apiDataDir: string;
  request(method: string, path: string, options?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<KilnResponse>;
  /** Kills the worker process (SIGKILL: no shutdown, as a crash or an evicted pod). */
  killWorker(): Promise<void>;
  startWorker(): Promise<void>;
  restartApi(): Promise<void>;
  stopTemporal(): Promise<void>;
  /** Starts the Temporal server again on its address and history (a SQLite file). */
  startTemporal(): Promise<void>;
  /** Moves an organization to a plan (its rate limits), as an operator would. */
  setPlan(organizationId: string, plan: 'free' | 'startup' | 'growth' | 'enterprise'): Promise<void>;
  stop(): Promise<void>;
}

const SIGNING_KEY = 'e2e-signing-key-0123456789abcdefghijklmnopqrstuv';
const ROOT = new URL('../..', import.meta.url).pathname;

export async function startKiln(
  testFile: string,
  options: { nodePools?: readonly GpuNodePool[]; /** Added to the API's and worker's environment. */ env?: Record<string, string> } = {},
): Promise<Kiln> {
  const dataDir = await mkdtemp(join(tmpdir(), 'kiln-e2e-'));
  const apiDataDir = await mkdtemp(join(tmpdir(), 'kiln-e2e-api-'));
  // The worker keeps its workflow bundles in DATA_DIR/workflow-bundles: this one shares the test run's, which the
  // other files built already, instead of bundling every queue again (seconds of webpack per queue).
  const bundles = resolve(testBundleDir()); // absolute: the test data dir may be given relative
  await mkdir(bundles, { recursive: true });
  await symlink(bundles, join(dataDir, 'workflow-bundles'));
  const cluster = await startTestGpuCluster(options.nodePools);
  const databaseUrl = await createTestDatabase(testFile);
  const temporalPorts = { port: await freePort(), uiPort: await freePort() };
  const apiPort = await freePort();
  let temporal: TemporalServer = await startTemporal({ dataDir: join(dataDir, 'temporal'), ...temporalPorts });
  // This file's own Prometheus, scraping the cluster's model servers each second (the metric routes read it).
  const prometheus: PrometheusServer = await startPrometheus({
    dataDir: join(dataDir, 'prometheus'), port: await freePort(), kubeconfigs: [cluster.kubeconfig], scrapeIntervalSeconds: 1,
  });

  const env = {
    ...pulumiToolsEnv(), ...process.env,
    DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address, KILN_SIGNING_KEY: SIGNING_KEY,
    PULUMI_CONFIG_PASSPHRASE: 'e2e', PORT: String(apiPort), LOG_LEVEL: 'warn', PROMETHEUS_URL: prometheus.url,
    // The autoscaler reads load every 2 s here (Prometheus scrapes every second): scaling tests take seconds.
    KILN_AUTOSCALE_INTERVAL_SECONDS: '2',
    // Metering closes 2-second intervals a second after they end: what the deployments ran is drawn from credits as the tests go.
    KILN_METERING_INTERVAL_SECONDS: '2', KILN_METERING_SETTLE_SECONDS: '1',
    // Pods the cluster cannot place fail their deployment after 5 s here, not a minute.
    KILN_UNSCHEDULABLE_GRACE_SECONDS: '5',
    ...options.env,
  };
  const start = (role: 'api' | 'worker') => startProcess(`kiln ${role}`, process.execPath,
    [join(ROOT, role === 'api' ? 'control-plane/main.ts' : 'workflows/worker.ts')],
    { env: { ...env, DATA_DIR: role === 'api' ? apiDataDir : dataDir }, cwd: ROOT, logFile: join(dataDir, 'logs', `${role}.log`) });
  const url = `http://127.0.0.1:${apiPort}`;

  let api: ServerProcess = await start('api');
  await waitUntilReady(api, async () => (await fetch(`${url}/v1/health`)).ok);
  let worker: ServerProcess | undefined = await start('worker');

  // The API migrated the database; the local cluster is registered as `npm start` registers it.
  const orm = await openDatabase(databaseUrl, { migrate: false });
  await syncKubernetesCluster(orm.em.fork(), createSecretBox(deriveKey(SIGNING_KEY, 'cluster-kubeconfigs')), 'local', await readFile(cluster.kubeconfig, 'utf8'));

  const kiln: Kiln = {
    url: () => url,
    cluster,
    databaseUrl,
    dataDir,
    apiDataDir,
    async request(method, path, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      if (requestOptions.token) headers.authorization = `Bearer ${requestOptions.token}`;
      let body: string | undefined;
      if (requestOptions.body !== undefined) {
        body = JSON.stringify(requestOptions.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(url + path, { method, headers, body });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
    },
    async killWorker() {
      if (!worker) return;
      const exited = new Promise((resolve) => worker!.child.once('exit', resolve));
      worker.child.kill('SIGKILL');
      await exited;
      worker = undefined;
    },
    async startWorker() {
      worker ??= await start('worker');
    },
    async restartApi() {
      await api.stop();
      api = await start('api');
      await waitUntilReady(api, async () => (await fetch(`${url}/v1/health`)).ok);
    },
    async stopTemporal() {
      await temporal.stop();
    },
    async startTemporal() {
      temporal = await startTemporal({ dataDir: join(dataDir, 'temporal'), ...temporalPorts });
    },
    async setPlan(organizationId, plan) {
      await orm.em.fork().getConnection().execute('UPDATE organization SET plan = ? WHERE id = ?', [plan, organizationId]);
    },
    async stop() {
      await worker?.stop();
      await api.stop();
      await orm.close();
      await temporal.stop();
      await prometheus.stop();
      await cluster.stop();
    },
  };
  return kiln;
}

/** A new user and organization on the growth plan (rate limits that polling tests stay under), with an API key. */
export async function newTenant(kiln: Kiln, label: string, scope: 'full_access' | 'deployments_only' | 'read_only' = 'deployments_only') {
  const email = `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}@example.com`;
  const signup = await kiln.request('POST', '/v1/auth/signup', {
    body: { email, password: 'correct horse battery', name: label, organizationName: `${label} org` },
  });
  if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${JSON.stringify(signup.body)}`);
  const organizationId = signup.body.user.organization_id as string;
  await kiln.setPlan(organizationId, 'growth');
  const key = await kiln.request('POST', '/v1/settings/api-keys', { token: signup.body.access_token, body: { name: `${label} key`, scope } });
  if (key.status !== 201) throw new Error(`api key failed: ${key.status} ${JSON.stringify(key.body)}`);
  return { organizationId, token: signup.body.access_token as string, key: key.body.key as string };
}

/** Polls a deployment until `until` holds for it; answers the deployment as the platform API shows it. */
export async function deploymentWhen(
  kiln: Kiln, key: string, id: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  until: (deployment: any) => boolean, what: string, timeoutMs = 120_000,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any> {
  return eventually(what, async () => {
    await sleep(250); // a status changes in seconds: no need to ask ten times a second
    const res = await kiln.request('GET', `/api/deployments/${id}`, { token: key });
    return res.status === 200 && until(res.body.data) ? res.body.data : undefined;
  }, timeoutMs);
}
