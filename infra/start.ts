// `npm start`: everything Kiln needs on one machine, in order, with a log line each; Ctrl-C stops them all.
// DATABASE_URL, TEMPORAL_ADDRESS and KUBECONFIG replace the embedded PostgreSQL, Temporal dev server and
// local GPU cluster with existing ones.
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { deriveKey } from '../control-plane/auth/keys.ts';
import { createSecretBox } from '../control-plane/auth/secret-box.ts';
import { syncKubernetesCluster } from '../control-plane/clusters/service.ts';
import { developmentSecret, loadConfig } from '../control-plane/config.ts';
import { openDatabase } from '../control-plane/database/orm.ts';
import { startApi } from '../control-plane/main.ts';
import { DEPLOYMENTS_TASK_QUEUE } from '../workflows/contract/deployment.ts';
import { WEBHOOKS_TASK_QUEUE } from '../workflows/contract/webhooks.ts';
import { REPORTS_TASK_QUEUE } from '../workflows/contract/reports.ts';
import { startWorker } from '../workflows/worker.ts';
import { DEV_POSTGRES_PORT, externalPostgres, startPostgres } from './servers/postgres.ts';
import { externalTemporal, startTemporal } from './servers/temporal.ts';
import { startGpuCluster } from './servers/gpu-cluster.ts';
import { describePulumiPlugins } from './tools/pulumi-plugins.ts';

const dataDir = resolve(process.env.DATA_DIR ?? '.data');
const stops: (() => Promise<unknown>)[] = [];
const say = (line: string) => console.log(`kiln: ${line}`);

async function main(): Promise<void> {
  say(`data folder ${dataDir}`);

  const postgres = process.env.DATABASE_URL
    ? externalPostgres(process.env.DATABASE_URL)
    : await startPostgres({ dataDir, port: DEV_POSTGRES_PORT });
  stops.push(() => postgres.stop());
  say(process.env.DATABASE_URL ? 'PostgreSQL: using DATABASE_URL' : `PostgreSQL: embedded, 127.0.0.1:${DEV_POSTGRES_PORT}`);

  const temporal = process.env.TEMPORAL_ADDRESS
    ? externalTemporal(process.env.TEMPORAL_ADDRESS)
    : await startTemporal({ dataDir: join(dataDir, 'temporal'), port: 7233, uiPort: 8233 });
  stops.push(() => temporal.stop());
  say(`Temporal: ${temporal.address}${temporal.uiUrl ? `, Web UI ${temporal.uiUrl}` : ' (TEMPORAL_ADDRESS)'}`);

  let kubeconfig = process.env.KUBECONFIG;
  if (kubeconfig) {
    say(`GPU cluster: using KUBECONFIG ${kubeconfig}`);
  } else {
    const cluster = await startGpuCluster({ dataDir: join(dataDir, 'gpu-cluster'), basePort: 16440 });
    stops.push(() => cluster.stop());
    kubeconfig = cluster.kubeconfig;
    say(`GPU cluster: local Kubernetes with simulated GPU nodes (kwok), kubeconfig ${kubeconfig}`);
    say(`model servers: simulated vLLM on each Ready pod's loopback address in ${cluster.podCidr}, logs in ${cluster.podLogDir}`);
  }

  for (const plugin of describePulumiPlugins()) say(`Pulumi plugin ${plugin}`);

  const config = await loadConfig({ ...process.env, DATA_DIR: dataDir });
  const worker = await startWorker({
    temporalAddress: temporal.address, databaseUrl: postgres.url, dataDir,
    pulumiBackendUrl: process.env.PULUMI_BACKEND_URL, pulumiPassphrase: process.env.PULUMI_CONFIG_PASSPHRASE ?? (await developmentSecret(dataDir, 'pulumi-passphrase')),
    signingKey: config.signingKey, allowPrivateWebhookUrls: config.env !== 'production',
  });
  stops.push(() => worker.stop());
  say(`worker: polling task queues ${DEPLOYMENTS_TASK_QUEUE}, ${WEBHOOKS_TASK_QUEUE} and ${REPORTS_TASK_QUEUE}`);

  const api = await startApi({ databaseUrl: postgres.url, port: Number(process.env.PORT ?? 8080), dataDir, temporalAddress: temporal.address });
  stops.push(() => api.close());
  say(`API: ${api.url} (reference API under /v1, platform API under /api)`);

  // Deployments are placed on registered clusters: the one started (or named by KUBECONFIG) is `local`.
  // A cluster Kiln cannot read (e.g. a kubeconfig that signs in through a command) leaves the rest running:
  // deployments answer 503 GPU_UNAVAILABLE until an administrator registers one.
  const orm = await openDatabase(postgres.url, { migrate: false });
  try {
    const secrets = createSecretBox(deriveKey(config.signingKey, 'cluster-kubeconfigs'));
    const cluster = await syncKubernetesCluster(orm.em.fork(), secrets, 'local', await readFile(kubeconfig, 'utf8'));
    say(`GPU cluster registered as "local" (${cluster.id}): ${cluster.gpus.map((g) => `${g.count} × ${g.gpuType}`).join(', ') || 'no GPU nodes'}`);
  } catch (error) {
    say(`GPU cluster NOT registered: ${(error as Error).message}`);
  } finally {
    await orm.close();
  }
  say('ready; Ctrl-C stops everything');
}

let stopping = false;
async function stopAll(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    say('stopping');
    for (const stop of stops.reverse()) await stop().catch((e: Error) => console.error(`kiln: ${e.message}`));
  }
  process.exit(code);
}
process.once('SIGINT', () => void stopAll(0));
process.once('SIGTERM', () => void stopAll(0));

main().catch((error: Error) => {
  console.error(`kiln: failed to start: ${error.message}`);
  void stopAll(1);
});
