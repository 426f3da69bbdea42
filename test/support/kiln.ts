// Kiln as it runs for real, for end-to-end tests: the API and the worker (and, when asked, more APIs, workers
// and inference gateways) as processes of their own, started the way `npm run api`, `npm run worker` and
// `npm run gateway` start them (so they can be killed and restarted mid-way), each with a DATA_DIR of its own
// (they share no folder, as on hosts of their own), a Temporal dev server of this file's own (its task queues
// then serve only this file's database, and it can be killed and restarted too), and a local GPU cluster with
// simulated model servers. The database is the test run's server's, or with `ownPostgres` a PostgreSQL server of
// the file's own, which it can kill and restart. Tests reach Kiln through its public API only; the database is
// used to set a plan, as an operator would.
import { chmod, mkdir, mkdtemp, readFile, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join, resolve } from 'node:path';
import { deriveKey } from '../../lib/keys.ts';
import { createSecretBox } from '../../lib/secret-box.ts';
import { syncKubernetesCluster } from '../../control-plane/clusters/service.ts';
import { openDatabase } from '../../control-plane/database/orm.ts';
import type { GpuCluster, GpuNodePool } from '../../infra/servers/gpu-cluster.ts';
import { freePort, startProcess, waitUntilReady, type ServerProcess } from '../../infra/servers/process.ts';
import { startPostgres, type LocalPostgresServer } from '../../infra/servers/postgres.ts';
import { startTemporal, type LocalTemporalServer } from '../../infra/servers/temporal.ts';
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

export interface KilnOptions {
  nodePools?: readonly GpuNodePool[];
  /** Added to the API's, worker's and gateway's environment. */
  env?: Record<string, string>;
  /** API processes, each on a port of its own (1 unless given). */
  apis?: number;
  /** Worker processes, all serving the same task queues (1 unless given). */
  workers?: number;
  /** Inference gateway processes (none unless given). */
  gateways?: number;
  /** A PostgreSQL server of this file's own (the test run's shared one otherwise), so it can be killed and restarted. */
  ownPostgres?: boolean;
}

export interface Kiln {
  /** The first API's address. */
  url(): string;
  /** Every API's address, by index. */
  readonly apiUrls: readonly string[];
  /** Every gateway's address, by index. */
  readonly gatewayUrls: readonly string[];
  readonly cluster: GpuCluster;
  readonly databaseUrl: string;
  /** DATA_DIR of the first worker (the Pulumi file backend lives under it), and of this file's servers. */
  readonly dataDir: string;
  /** DATA_DIR of the first API: a folder apart from the worker's, as on hosts of their own. */
  readonly apiDataDir: string;
  /** A request to the first API. */
  request(method: string, path: string, options?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<KilnResponse>;
  // kill*: SIGKILL, no shutdown, as a crash or an evicted pod; start* starts it again on its address and data.
  killWorker(index?: number): Promise<void>;
  startWorker(index?: number): Promise<void>;
  killApi(index: number): Promise<void>;
  startApi(index: number): Promise<void>;
  restartApi(): Promise<void>;
  killGateway(index: number): Promise<void>;
  startGateway(index: number): Promise<void>;
  /** Only with `ownPostgres`: kills the postmaster; its backends end as they notice. */
  killPostgres(): Promise<void>;
  /** Only with `ownPostgres`: starts the server again on its port and data folder (recovering from its WAL). */
  startPostgres(): Promise<void>;
  killTemporal(): Promise<void>;
  stopTemporal(): Promise<void>;
  /** Starts the Temporal server again on its address and history (a SQLite file). */
  startTemporal(): Promise<void>;
  /** Moves an organization to a plan (its rate limits), as an operator would. */
  setPlan(organizationId: string, plan: 'free' | 'startup' | 'growth' | 'enterprise'): Promise<void>;
  stop(): Promise<void>;
}

const SIGNING_KEY = 'e2e-signing-key-0123456789abcdefghijklmnopqrstuv';
const ROOT = new URL('../..', import.meta.url).pathname;

export async function startKiln(testFile: string, options: KilnOptions = {}): Promise<Kiln> {
  const dataDir = await mkdtemp(join(tmpdir(), 'kiln-e2e-'));
  const cluster = await startTestGpuCluster(options.nodePools);
  let postgres: LocalPostgresServer | undefined;
  const postgresPort = options.ownPostgres ? await freePort() : 0;
  const startOwnPostgres = async () => {
    postgres = await startPostgres({ dataDir: join(dataDir, 'postgres-server'), port: postgresPort });
  };
  let databaseUrl: string;
  if (options.ownPostgres) {
    // Run as root, PostgreSQL runs as a user of its own, which must reach its folder through this one.
    await chmod(dataDir, 0o755);
    await startOwnPostgres();
    databaseUrl = await postgres!.createDatabase('kiln'); // the first API migrates it
  } else {
    databaseUrl = await createTestDatabase(testFile);
  }
  const temporalPorts = { port: await freePort(), uiPort: await freePort() };
  let temporal: LocalTemporalServer = await startTemporal({ dataDir: join(dataDir, 'temporal'), ...temporalPorts });
  // This file's own Prometheus, scraping the cluster's model servers each second (the metric routes read it).
  const prometheus: PrometheusServer = await startPrometheus({
    dataDir: join(dataDir, 'prometheus'), port: await freePort(), kubeconfigs: [cluster.kubeconfig], scrapeIntervalSeconds: 1,
  });

  const env = {
    ...pulumiToolsEnv(), ...process.env,
    DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address, KILN_SIGNING_KEY: SIGNING_KEY,
    PULUMI_CONFIG_PASSPHRASE: 'e2e', LOG_LEVEL: 'warn', PROMETHEUS_URL: prometheus.url,
    // The autoscaler reads load every 2 s here (Prometheus scrapes every second): scaling tests take seconds.
    KILN_AUTOSCALE_INTERVAL_SECONDS: '2',
    // Metering closes 2-second intervals a second after they end: what the deployments ran is drawn from credits as the tests go.
    KILN_METERING_INTERVAL_SECONDS: '2', KILN_METERING_SETTLE_SECONDS: '1',
    // Pods the cluster cannot place fail their deployment after 5 s here, not a minute.
    KILN_UNSCHEDULABLE_GRACE_SECONDS: '5',
    ...options.env,
  };

  /** One of Kiln's processes, by role and index: its own DATA_DIR and log, started again as it was after a kill. */
  const kilnProcess = async (role: 'api' | 'worker' | 'gateway', index: number) => {
    const name = index === 0 ? role : `${role}-${index}`;
    const ownDataDir = role === 'worker' && index === 0 ? dataDir : await mkdtemp(join(tmpdir(), `kiln-e2e-${name}-`));
    if (role === 'worker') {
      // A worker keeps its workflow bundles in DATA_DIR/workflow-bundles: the test run's, which the other files built
      // already, instead of bundling every queue again (seconds of webpack per queue).
      const bundles = resolve(testBundleDir()); // absolute: the test data dir may be given relative
      await mkdir(bundles, { recursive: true });
      await symlink(bundles, join(ownDataDir, 'workflow-bundles'));
    }
    const port = role === 'worker' ? undefined : await freePort();
    const url = `http://127.0.0.1:${port}`;
    const script = { api: 'control-plane/main.ts', worker: 'workflows/worker.ts', gateway: 'gateway/main.ts' }[role];
    const portEnv = role === 'api' ? { PORT: String(port) } : role === 'gateway' ? { KILN_GATEWAY_PORT: String(port) } : {};
    // The gateway serves its health only as liveness and readiness.
    const health = role === 'gateway' ? '/v1/health/ready' : '/v1/health';
    let running: ServerProcess | undefined;
    return {
      url,
      dataDir: ownDataDir,
      async start() {
        if (running) return;
        running = await startProcess(`kiln ${name}`, process.execPath, [join(ROOT, script)],
          { env: { ...env, ...portEnv, DATA_DIR: ownDataDir }, cwd: ROOT, logFile: join(dataDir, 'logs', `${name}.log`) });
        if (port) await waitUntilReady(running, async () => (await fetch(url + health)).ok);
      },
      async kill() {
        await running?.kill();
        running = undefined;
      },
      async stop() {
        await running?.stop();
        running = undefined;
      },
    };
  };
  type KilnProcess = Awaited<ReturnType<typeof kilnProcess>>;
  const many = (role: 'api' | 'worker' | 'gateway', count: number) => Promise.all(Array.from({ length: count }, (_, i) => kilnProcess(role, i)));
  const apis = await many('api', options.apis ?? 1);
  const workers = await many('worker', options.workers ?? 1);
  const gateways = await many('gateway', options.gateways ?? 0);
  const at = (processes: KilnProcess[], index: number) => processes[index] ?? (() => { throw new Error(`no process ${index} of ${processes.length}`); })();
  /** Kiln's processes first, then the servers they use. */
  const stopAll = async () => {
    for (const each of [...gateways, ...workers, ...apis]) await each.stop();
    await temporal.stop();
    await postgres?.stop();
    await prometheus.stop();
    await cluster.stop();
  };
  try {
    // The first API migrates the database before anything else opens it.
    await apis[0]!.start();
    for (const each of [...apis, ...workers, ...gateways]) await each.start();
  } catch (error) {
    // A process that never got ready fails the file at once, rather than holding it open until its timeout.
    await stopAll();
    throw error;
  }

  // The local cluster, with the nodes this file asked for, is registered by its kubeconfig (npm start instead
  // has its workflow provision them: test/e2e/start.test.ts).
  const orm = await openDatabase(databaseUrl, { migrate: false });
  await syncKubernetesCluster(orm.em.fork(), createSecretBox(deriveKey(SIGNING_KEY, 'cluster-kubeconfigs')), 'local', await readFile(cluster.kubeconfig, 'utf8'));
  const ownPostgres = () => postgres ?? (() => { throw new Error('the test run\'s PostgreSQL is shared: startKiln({ ownPostgres: true }) for one to kill'); })();

  const kiln: Kiln = {
    url: () => apis[0]!.url,
    apiUrls: apis.map((a) => a.url),
    gatewayUrls: gateways.map((g) => g.url),
    cluster,
    databaseUrl,
    dataDir,
    apiDataDir: apis[0]!.dataDir,
    async request(method, path, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      if (requestOptions.token) headers.authorization = `Bearer ${requestOptions.token}`;
      let body: string | undefined;
      if (requestOptions.body !== undefined) {
        body = JSON.stringify(requestOptions.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(apis[0]!.url + path, { method, headers, body });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
    },
    killWorker: (index = 0) => at(workers, index).kill(),
    startWorker: (index = 0) => at(workers, index).start(),
    killApi: (index) => at(apis, index).kill(),
    startApi: (index) => at(apis, index).start(),
    async restartApi() {
      await apis[0]!.stop();
      await apis[0]!.start();
    },
    killGateway: (index) => at(gateways, index).kill(),
    startGateway: (index) => at(gateways, index).start(),
    killPostgres: () => ownPostgres().kill(),
    async startPostgres() {
      ownPostgres();
      await startOwnPostgres();
    },
    killTemporal: () => temporal.kill(),
    stopTemporal: () => temporal.stop(),
    async startTemporal() {
      temporal = await startTemporal({ dataDir: join(dataDir, 'temporal'), ...temporalPorts });
    },
    async setPlan(organizationId, plan) {
      await orm.em.fork().getConnection().execute('UPDATE organization SET plan = ? WHERE id = ?', [plan, organizationId]);
    },
    async stop() {
      await orm.close();
      await stopAll();
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
