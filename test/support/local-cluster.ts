// What the `local` cluster tests share: an API, a Temporal dev server of the file's own whose worker polls the
// real kiln-deployments task queue with the activities workflows/deployment/queue.ts ships (the LocalGpuPool
// program run by the real Pulumi CLI through the real Kubernetes provider plugin), a local cluster started with
// no nodes of its own (every GPU node is one a cluster's workflow declared), and a platform administrator.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { binaryPath } from '../../infra/tools/paths.ts';
import { deriveKey } from '../../lib/keys.ts';
import { createPrometheusClient } from '../../lib/prometheus/client.ts';
import { createSecretBox, type SecretBox } from '../../lib/secret-box.ts';
import { NODE_POOL_LABEL } from '../../stacks/local-gpu-pool/index.ts';
import { SEARCH_ATTRIBUTES } from '../../workflows/contract/search-attributes.ts';
import { deploymentActivities, deploymentsQueue } from '../../workflows/deployment/queue.ts';
import { createQueueWorker } from '../../workflows/queue.ts';
import { webhooksQueue } from '../../workflows/webhooks/queue.ts';
import { signupAdmin } from './admin.ts';
import { startTestApi, TEST_SIGNING_KEY, type TestApi } from './control-plane.ts';
import { startTestGpuCluster } from './gpu-cluster.ts';
import { pulumiSettingsIn } from './pulumi.ts';
import { testBundleDir } from './temporal.ts';

export interface LocalClusterHarness {
  readonly env: TestWorkflowEnvironment;
  readonly api: TestApi;
  readonly gpu: GpuCluster;
  /** The local cluster's kubeconfig, as an administrator registers it. */
  readonly kubeconfig: string;
  /** The API's kubeconfig key, as the worker and npm start derive it from the same signing key. */
  readonly kubeconfigs: SecretBox;
  /** A platform administrator's access token. */
  readonly admin: string;
  stop(): Promise<void>;
}

export interface LocalClusterHarnessOptions {
  /**
   * Deployments that cannot be placed ask the cluster's workflow to grow a pool, and idle nodes shrink it (the
   * worker's Temporal client); the capacity events' webhooks are delivered by a webhook worker of the file's own.
   */
  readonly growPools?: boolean;
  readonly unschedulableGraceMs?: number;
  /** How long a pool's node may run no Kiln replica before it goes (the worker's KILN_POOL_IDLE_SECONDS). */
  readonly poolIdleMs?: number;
}

export async function startLocalClusterHarness(testFile: string, options: LocalClusterHarnessOptions = {}): Promise<LocalClusterHarness> {
  const [env, gpu, dir] = await Promise.all([
    TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: binaryPath('temporal') }, searchAttributes: SEARCH_ATTRIBUTES } }),
    startTestGpuCluster([]),
    mkdtemp(join(tmpdir(), 'kiln-local-cluster-')),
  ]);
  const api = await startTestApi(testFile, { defaultCluster: false, orchestratorTemporalAddress: env.address });
  const kubeconfigs = createSecretBox(deriveKey(TEST_SIGNING_KEY, 'cluster-kubeconfigs'));
  const worker = await createQueueWorker(deploymentsQueue, {
    connection: env.nativeConnection,
    bundleDir: testBundleDir(),
    activities: deploymentActivities({
      orm: api.orm, kubeconfigs, pulumi: pulumiSettingsIn(dir), pollIntervalMs: 200, prometheus: createPrometheusClient('http://127.0.0.1:9'),
      unschedulableGraceMs: options.unschedulableGraceMs, poolIdleMs: options.poolIdleMs, ...(options.growPools ? { client: env.client } : {}),
    }),
  });
  const webhooks = options.growPools ? await createQueueWorker(webhooksQueue, {
    connection: env.nativeConnection,
    bundleDir: testBundleDir(),
    activities: webhooksQueue.activities({ orm: api.orm, signingKey: TEST_SIGNING_KEY, allowPrivateWebhookUrls: true }),
  }) : undefined;
  const running = Promise.all([worker.run(), webhooks?.run()]);
  return {
    env, api, gpu, kubeconfigs, kubeconfig: await readFile(gpu.kubeconfig, 'utf8'), admin: (await signupAdmin(api)).token,
    async stop() {
      worker.shutdown();
      webhooks?.shutdown();
      await running;
      await api.close();
      await env.teardown();
      await gpu.stop();
    },
  };
}

/** The Node objects of a pool (by its label), as the cluster's API lists them. */
export const poolNodes = async <N = { metadata: { name: string } }>(gpu: GpuCluster, pool = 'l4') =>
  (await gpu.api.get<{ items: N[] }>(`/api/v1/nodes?labelSelector=${encodeURIComponent(`${NODE_POOL_LABEL}=${pool}`)}`)).items;

/** The activities a workflow ran, in order, status writes and the periodic reads left out (a running deployment's checks for lost replicas, a cluster's reads of its pools' use). */
export const activitiesRun = async (env: TestWorkflowEnvironment, workflowId: string) => ((await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [])
  .flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []).filter((name) => !name.startsWith('record') && name !== 'replaceLostReplicas' && name !== 'readPoolUse');
