// `npm start`: everything Kiln needs on one machine, in order, with a log line each; Ctrl-C or SIGTERM stops them
// all within STOP_DEADLINE_MS.
// DATABASE_URL, TEMPORAL_ADDRESS and KUBECONFIG replace the embedded PostgreSQL, Temporal dev server and
// local GPU cluster with existing ones. Its lines are pino's JSON, as the API's and the worker's are.
import { access, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { deriveKey } from '../lib/keys.ts';
import { createSecretBox } from '../lib/secret-box.ts';
import { Client, Connection } from '@temporalio/client';
import type { NodePool } from '../catalog/node-pools.ts';
import { GpuClusterSchema } from '../control-plane/clusters/gpu-cluster.entity.ts';
import { createClusterOrchestrator } from '../control-plane/clusters/orchestrator.ts';
import { syncKubernetesCluster, syncLocalCluster } from '../control-plane/clusters/service.ts';
import { developmentSecret, DOCS_DIST, exitOnConfigError, loadConfig, WEB_DIST } from '../control-plane/config.ts';
import { openDatabase } from '../control-plane/database/orm.ts';
import { startApi } from '../control-plane/server.ts';
import { startWorker } from '../workflows/worker.ts';
import { startGateway } from '../gateway/server.ts';
import { moveState } from '../workflows/pulumi/move-state.ts';
import { stateFilesOf } from '../workflows/pulumi/diy-backend.ts';
import { stateFolder } from '../workflows/pulumi/state-folder.ts';
import { externalPostgres, startPostgres } from './servers/postgres.ts';
import { externalTemporal, startTemporal } from './servers/temporal.ts';
import { startGpuCluster } from './servers/gpu-cluster.ts';
import { externalPrometheus, startPrometheus } from './servers/prometheus.ts';
import { STRIPE_MOCK_SECRET_KEY, STRIPE_MOCK_WEBHOOK_SECRET, startStripeMock } from './servers/stripe-mock.ts';
import { ensurePortFree, killEveryServer } from './servers/process.ts';
import { pulumiToolsEnv } from './tools/paths.ts';
import { webBuild } from './web-build.ts';
import { docsBuild } from './docs-build.ts';
import { ensureBuilt } from './stale-build.ts';
import { describePulumiPlugins } from './tools/pulumi-plugins.ts';

// The API's and the gateway's settings are checked before anything starts; the worker's once its database and
// Temporal are known.
const config = await loadConfig('api').catch(exitOnConfigError);
const gatewayConfig = await loadConfig('gateway').catch(exitOnConfigError);
const { dataDir } = config;
const log = pino({ level: config.logLevel });
// Kiln's own processes (the API, the gateway, the worker) stop first, then the servers they use, together.
const kilnStops: (() => Promise<unknown>)[] = [];
const serverStops: (() => Promise<unknown>)[] = [];
const say = (line: string) => log.info(line);

/**
 * What `npm start` offers a new user: a small fleet of several GPU types, the node pools of its `local` cluster,
 * which the cluster's workflow provisions (nodes `gpu-<type>-0`...). Registered once: later starts keep the pools.
 * The H100 and A100 pools keep their 4 nodes; the L4 pool grows to 12 nodes for deployments that need them, and
 * its idle nodes go after KILN_POOL_IDLE_SECONDS, down to 2.
 */
const DEFAULT_NODE_POOLS: readonly NodePool[] = [
  { name: 'gpu-nvidia-h100-80gb', gpuType: 'nvidia-h100-80gb', minSize: 4, desiredSize: 4, maxSize: 4, gpusPerNode: 8 },
  { name: 'gpu-nvidia-a100-80gb', gpuType: 'nvidia-a100-80gb', minSize: 4, desiredSize: 4, maxSize: 4, gpusPerNode: 8 },
  { name: 'gpu-nvidia-l4', gpuType: 'nvidia-l4', minSize: 2, desiredSize: 8, maxSize: 12, gpusPerNode: 1 },
];
/** How long the first start waits for the workflow to bring the local cluster's nodes up before saying it is ready. */
const LOCAL_CLUSTER_TIMEOUT_MS = 5 * 60_000;

/** The ports npm start's own servers will take, with what moves each: all checked before anything starts. */
type PortClaim = readonly [port: number, server: string, setting: string];
function portsToClaim(): PortClaim[] {
  const { localPorts: ports } = config;
  const claims: PortClaim[] = [];
  if (!config.databaseUrl) claims.push([config.embeddedPostgresPort, 'PostgreSQL', 'KILN_POSTGRES_PORT']);
  if (!process.env.TEMPORAL_ADDRESS) claims.push([ports.temporal, 'Temporal', 'KILN_TEMPORAL_PORT'], [ports.temporalUi, 'the Temporal Web UI', 'KILN_TEMPORAL_UI_PORT']);
  if (!process.env.KUBECONFIG) for (let i = 0; i < 4; i++) claims.push([ports.gpuCluster + i, 'the local GPU cluster', `KILN_GPU_CLUSTER_PORT (it takes 4 ports from ${ports.gpuCluster})`]);
  if (!config.stripe) claims.push([ports.stripeMock, 'stripe-mock', 'KILN_STRIPE_MOCK_PORT'], [ports.stripeMock + 1, 'stripe-mock (HTTPS)', 'KILN_STRIPE_MOCK_PORT (HTTPS takes the next port)']);
  if (config.port !== 0) claims.push([config.port, 'the API', 'PORT']);
  if (gatewayConfig.port !== 0) claims.push([gatewayConfig.port, 'the inference gateway', 'KILN_GATEWAY_PORT']);
  if (!process.env.PROMETHEUS_URL) claims.push([ports.prometheus, 'Prometheus', 'KILN_PROMETHEUS_PORT']);
  return claims;
}

async function main(): Promise<void> {
  say(`data folder ${dataDir}`);
  for (const [port, server, setting] of portsToClaim()) await ensurePortFree(port, server, setting);

  // Kiln's own metrics (GET /metrics/internal of the API and of the worker): scrapers send this token, generated
  // once into DATA_DIR/metrics-token unless KILN_METRICS_TOKEN gives one.
  const metricsToken = config.metricsToken ?? await developmentSecret(dataDir, 'metrics-token');

  const postgres = config.databaseUrl
    ? externalPostgres(config.databaseUrl)
    : await startPostgres({ dataDir, port: config.embeddedPostgresPort });
  serverStops.push(() => postgres.stop());
  say(config.databaseUrl ? 'PostgreSQL: using DATABASE_URL' : `PostgreSQL: embedded, 127.0.0.1:${config.embeddedPostgresPort}`);

  // Unset, TEMPORAL_ADDRESS means a dev server of npm start's own (on the address the configuration defaults to).
  const temporal = process.env.TEMPORAL_ADDRESS
    ? externalTemporal(config.temporalAddress)
    : await startTemporal({ dataDir: join(dataDir, 'temporal'), port: config.localPorts.temporal, uiPort: config.localPorts.temporalUi });
  serverStops.push(() => temporal.stop());
  say(`Temporal: ${temporal.address}${temporal.uiUrl ? `, Web UI ${temporal.uiUrl}` : ' (TEMPORAL_ADDRESS)'}`);

  let kubeconfig = process.env.KUBECONFIG;
  const ownCluster = !kubeconfig;
  if (kubeconfig) {
    say(`GPU cluster: using KUBECONFIG ${kubeconfig}`);
  } else {
    const cluster = await startGpuCluster({ dataDir: join(dataDir, 'gpu-cluster'), basePort: config.localPorts.gpuCluster, podNetwork: config.localPorts.gpuClusterPodNetwork });
    serverStops.push(() => cluster.stop());
    kubeconfig = cluster.kubeconfig;
    say(`GPU cluster: local Kubernetes whose GPU nodes (kwok) Kiln provisions, kubeconfig ${kubeconfig}`);
    say(`model servers: simulated vLLM on each Ready pod's loopback address in ${cluster.podCidr}, logs in ${cluster.podLogDir}`);
  }

  for (const plugin of describePulumiPlugins()) say(`Pulumi plugin ${plugin}`);


  // Unset, STRIPE_SECRET_KEY means the local Stripe stand-in (stripe-mock, on its usual ports) with test keys: checkout
  // and the portal answer with Stripe-shaped sessions, and webhooks verify against the test webhook secret.
  let stripe = config.stripe;
  if (!stripe) {
    const mock = await startStripeMock({ dataDir: join(dataDir, 'stripe-mock'), port: config.localPorts.stripeMock, httpsPort: config.localPorts.stripeMock + 1 });
    serverStops.push(() => mock.stop());
    ({ stripe } = await loadConfig('api', { ...process.env, STRIPE_SECRET_KEY: STRIPE_MOCK_SECRET_KEY, STRIPE_API_BASE: mock.url, STRIPE_WEBHOOK_SECRET: STRIPE_MOCK_WEBHOOK_SECRET }));
  }
  say(`Stripe: ${config.stripe ? `${config.stripe.apiBase} (STRIPE_SECRET_KEY)` : `the local stand-in (stripe-mock) at ${stripe!.apiBase}, webhook secret ${STRIPE_MOCK_WEBHOOK_SECRET}`}`);

  // The dashboard the API serves at /: built on first start and after its sources change.
  if (config.webDist === WEB_DIST) await ensureBuilt(webBuild, say);
  else say(config.webDist ? `dashboard: serving KILN_WEB_DIST ${config.webDist}` : 'dashboard: off (KILN_WEB_DIST is empty)');
  // The documentation site the API serves at /docs, the same way.
  if (config.docsDist === DOCS_DIST) await ensureBuilt(docsBuild, say);
  else say(config.docsDist ? `documentation: serving KILN_DOCS_DIST ${config.docsDist}` : 'documentation: off (KILN_DOCS_DIST is empty)');

  // The API first: it migrates the database, which the worker's first passes (alert evaluation, optimization) read.
  const api = await startApi({ config: { ...config, stripe, metricsToken, databaseUrl: postgres.url, temporalAddress: temporal.address, temporalUiUrl: config.temporalUiUrl ?? temporal.uiUrl }, log });
  kilnStops.push(() => api.close());
  const gateway = await startGateway({ config: { ...gatewayConfig, metricsToken, databaseUrl: postgres.url, temporalAddress: temporal.address }, log });
  kilnStops.push(() => gateway.close());
  // Metering closes a minute at a time here (an hour in production), so the walk-through sees its debits.
  const workerConfig = await loadConfig('worker', { ...pulumiToolsEnv(), KILN_METERING_INTERVAL_SECONDS: '60', KILN_METERING_SETTLE_SECONDS: '10', ...process.env, KILN_METRICS_TOKEN: metricsToken, DATABASE_URL: postgres.url, TEMPORAL_ADDRESS: temporal.address });
  if (workerConfig.metricsPort !== 0) await ensurePortFree(workerConfig.metricsPort, 'the worker\'s metrics', 'KILN_WORKER_METRICS_PORT');
  await moveLegacyPulumiState(dataDir, workerConfig.pulumiBackendUrl);
  const worker = await startWorker(workerConfig, log);
  kilnStops.push(() => worker.stop());
  say(`API: ${api.url} (reference API under /v1, platform API under /api)${config.webDist ? `; dashboard: ${api.url}/` : ''}${config.docsDist ? `; documentation: ${api.url}/docs/` : ''}`);
  say(`inference gateway: ${gateway.url}/v1/inference (the API serves the same route; the gateway scales apart from it)`);
  say(`Kiln's own metrics: ${api.url}/metrics/internal (API), ${gateway.url}/metrics/internal (gateway), http://127.0.0.1:${worker.metricsPort}/metrics/internal (worker), Bearer token in ${config.metricsToken ? 'KILN_METRICS_TOKEN' : join(dataDir, 'metrics-token')}`);

  // Unset, PROMETHEUS_URL means a Prometheus of npm start's own (on the address the configuration defaults to),
  // scraping the cluster's model servers and the API's and worker's own metrics.
  const prometheus = process.env.PROMETHEUS_URL
    ? externalPrometheus(config.prometheusUrl)
    : await startPrometheus({
      dataDir: join(dataDir, 'prometheus'), port: config.localPorts.prometheus, kubeconfigs: [kubeconfig],
      kiln: { targets: [new URL(api.url).host, new URL(gateway.url).host, `127.0.0.1:${worker.metricsPort}`], token: metricsToken },
    });
  serverStops.push(() => prometheus.stop());
  say(`Prometheus: ${prometheus.url}${process.env.PROMETHEUS_URL ? ' (PROMETHEUS_URL)' : ', scraping the model servers by pod discovery and Kiln\'s own metrics'}`);

  // Deployments are placed on registered clusters, this one as `local`: the cluster started here is a `local`
  // cluster whose node pools the worker's cluster workflow applies (a pulumi up), one named by KUBECONFIG is
  // registered with the nodes it has. A cluster Kiln cannot read (e.g. a kubeconfig that signs in through a
  // command) leaves the rest running: deployments answer 503 GPU_UNAVAILABLE until an administrator registers one.
  const orm = await openDatabase(postgres.url, { migrate: false });
  const connection = await Connection.connect({ address: temporal.address });
  try {
    const secrets = createSecretBox(deriveKey(config.signingKey, 'cluster-kubeconfigs'));
    const text = await readFile(kubeconfig, 'utf8');
    let cluster;
    if (ownCluster) {
      const { id } = await syncLocalCluster(orm.em.fork(), { secrets, orchestrator: createClusterOrchestrator(new Client({ connection })) }, 'local', text, DEFAULT_NODE_POOLS);
      say(`GPU cluster "local" (${id}): its node pools are applied by its workflow (Temporal workflow ${id})`);
      cluster = await untilSettled(orm, id);
    } else {
      cluster = await syncKubernetesCluster(orm.em.fork(), secrets, 'local', text);
    }
    if (cluster.status === 'failed') throw new Error(`its workflow failed: ${cluster.failureReason}`);
    say(`GPU cluster registered as "local" (${cluster.id}): ${cluster.gpus.map((g) => `${g.count} × ${g.gpuType}`).join(', ') || 'no GPU nodes'}`);
  } catch (error) {
    log.warn(`GPU cluster NOT registered: ${(error as Error).message}`);
  } finally {
    await connection.close();
    await orm.close();
  }
  say('ready; Ctrl-C stops everything');
}

/** The local cluster once its workflow has made it ready or failed; an error after LOCAL_CLUSTER_TIMEOUT_MS. */
async function untilSettled(orm: Awaited<ReturnType<typeof openDatabase>>, id: string) {
  for (const deadline = Date.now() + LOCAL_CLUSTER_TIMEOUT_MS; Date.now() < deadline; await sleep(500)) {
    const cluster = await orm.em.fork().findOneOrFail(GpuClusterSchema, id);
    if (cluster.status === 'ready' || cluster.status === 'failed') return cluster;
  }
  throw new Error(`its node pools were not ready within ${LOCAL_CLUSTER_TIMEOUT_MS / 60_000} minutes: see workflow ${id} in the Temporal UI`);
}

// A supervisor (systemd, a container runtime) waits about 10 s after SIGTERM before it kills: everything is stopped
// politely within this, and what is still running then is killed.
const STOP_DEADLINE_MS = 8_000;
let stopping = false;
async function stopAll(code: number): Promise<never> {
  if (stopping) {
    // A second Ctrl-C: stop waiting.
    killEveryServer();
    process.exit(code);
  }
  stopping = true;
  say('stopping');
  const polite = (async () => {
    const kilnStopped = (async () => {
      for (const stop of kilnStops.reverse()) await stop().catch((e: Error) => log.error(e.message));
    })();
    // The worker waits for its activities to let go; the servers must still get their turn within the deadline.
    await Promise.race([kilnStopped, sleep(STOP_DEADLINE_MS / 2, undefined, { ref: false })]);
    await Promise.all(serverStops.map((stop) => stop().catch((e: Error) => log.error(e.message))));
  })();
  const inTime = await Promise.race([polite.then(() => true), sleep(STOP_DEADLINE_MS, false, { ref: false })]);
  if (!inTime) log.warn(`not all stopped within ${STOP_DEADLINE_MS / 1000} s: killing the rest`);
  killEveryServer();
  process.exit(code);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

main().catch((error: Error) => {
  log.error(`failed to start: ${error.message}`);
  void stopAll(1);
});

/**
 * The stacks of the file backend npm start kept in DATA_DIR/pulumi-state before its state moved into the database,
 * moved there before the worker starts (npm run pulumi:migrate-state's move); the folder is then renamed, kept.
 */
async function moveLegacyPulumiState(dataDir: string, backendUrl: string): Promise<void> {
  const folder = join(dataDir, 'pulumi-state');
  const destination = stateFilesOf(backendUrl);
  if (!backendUrl.startsWith('postgres://') || !destination || !(await access(folder).then(() => true, () => false))) return;
  const move = await moveState(stateFolder(folder), destination);
  say(`Pulumi state: moved ${move.stacks.length} stacks (${move.moved.length} files) from ${folder} into the database`);
  if (move.differing.length) return say(`Pulumi state: ${move.differing.length} files of ${folder} differ from the database's, which were kept: ${move.differing.join(', ')}`);
  await rename(folder, `${folder}.moved`);
}
