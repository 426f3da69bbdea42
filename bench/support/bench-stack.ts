// Everything `npm start` runs, for the benches that drive deployments end to end: embedded PostgreSQL, a
// Temporal dev server, the local GPU cluster with simulated model servers, one worker and the API, all under
// DATA_DIR/<name> (emptied first), with the cluster registered by a platform administrator as in production.
import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadConfig, type ApiConfig } from '../../control-plane/config.ts';
import { startApi } from '../../control-plane/server.ts';
import { startGpuCluster, type GpuCluster, type GpuNodePool } from '../../infra/servers/gpu-cluster.ts';
import { freePort } from '../../infra/servers/process.ts';
import { startPostgres } from '../../infra/servers/postgres.ts';
import { startTemporal } from '../../infra/servers/temporal.ts';
import { startWorker } from '../../workflows/worker.ts';
import { pulumiToolsEnv } from '../../infra/tools/paths.ts';

export interface BenchStack {
  readonly dataDir: string;
  readonly databaseUrl: string;
  readonly apiUrl: string;
  readonly cluster: GpuCluster;
  readonly temporal: Client;
  /** A platform administrator's access token (the one that registered the cluster). */
  readonly admin: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- benches read answers freely
  call(method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; body: Record<string, any> }>;
  /** Signs up a user with an organization of its own. */
  newOrganization(label: string): Promise<{ token: string; organizationId: string }>;
  /** Stops the worker and starts another with these variables on top of its configuration (e.g. to compare settings). */
  restartWorker(env: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

export async function startBenchStack(name: string, nodePools: readonly GpuNodePool[]): Promise<BenchStack> {
  const dataDir = resolve(process.env.DATA_DIR ?? '.data', name);
  await rm(dataDir, { recursive: true, force: true });
  process.env.KILN_SIGNING_KEY = 'bench-signing-key-0123456789abcdefghijklmnop';
  process.env.LOG_LEVEL ??= 'warn';
  process.env.KILN_ADMIN_EMAILS = 'admin@bench.example';
  console.log(`${name}: servers under ${dataDir}`);
  const postgres = await startPostgres({ dataDir, port: await freePort() });
  const temporalServer = await startTemporal({ dataDir: join(dataDir, 'temporal'), port: await freePort(), uiPort: await freePort() });
  const cluster = await startGpuCluster({ dataDir: join(dataDir, 'gpu-cluster'), nodePools, podReadyDelayMs: 300 });
  const api = await startApi({
    config: await loadConfig('api', { ...process.env, DATABASE_URL: postgres.url, TEMPORAL_ADDRESS: temporalServer.address, DATA_DIR: dataDir, PORT: '0' }) as ApiConfig & { databaseUrl: string },
  });
  const workerWith = async (env: Record<string, string>) => startWorker(await loadConfig('worker', {
    ...pulumiToolsEnv(), ...process.env, TEMPORAL_ADDRESS: temporalServer.address, DATABASE_URL: postgres.url, DATA_DIR: dataDir, PULUMI_CONFIG_PASSPHRASE: 'bench-passphrase', ...env,
  }));
  let worker = await workerWith({});
  const temporal = new Client({ connection: await Connection.connect({ address: temporalServer.address }) });

  const call: BenchStack['call'] = async (method, path, token, body) => {
    const response = await fetch(api.url + path, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() as Awaited<ReturnType<BenchStack['call']>>['body'] };
  };
  const newOrganization = async (label: string) => {
    const session = await call('POST', '/v1/auth/signup', undefined, { email: `${label}@bench.example`, password: 'bench-password', name: label, organizationName: label });
    if (session.status !== 201) throw new Error(`sign-up failed: ${JSON.stringify(session.body)}`);
    return { token: session.body.access_token as string, organizationId: session.body.user.organization_id as string };
  };

  const admin = await newOrganization('admin');
  const registered = await call('POST', '/v1/admin/clusters', admin.token, { provider: 'kubernetes', name: 'local', kubeconfig: await readFile(cluster.kubeconfig, 'utf8') });
  if (registered.status !== 201) throw new Error(`cluster registration failed: ${registered.status} ${JSON.stringify(registered.body)}`);

  return {
    dataDir, databaseUrl: postgres.url, apiUrl: api.url, cluster, temporal, admin: admin.token, call, newOrganization,
    async restartWorker(env) {
      await worker.stop();
      worker = await workerWith(env);
    },
    async stop() {
      await temporal.connection.close();
      await api.close();
      await worker.stop();
      await cluster.stop();
      await temporalServer.stop();
      await postgres.stop();
    },
  };
}
