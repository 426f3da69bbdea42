// Clusters and circuits end to end, on a Temporal dev server of this file's own (its worker polls the real
// kiln-deployments task queue with the activities workflows/deployment/queue.ts ships: Kiln's real deployment program,
// run by the real Pulumi CLI through the real Kubernetes provider plugin), PostgreSQL and the real
// local GPU cluster:
// - a deployment is placed on the cluster registered by kubeconfig and provisioned with that kubeconfig;
// - `pulumi up`s the cluster refuses (a ResourceQuota allowing no more Deployments: the API server answers
//   403 and the provider reports it) open the circuit, which then refuses the workflow's attempt; once the
//   quota is gone, a trial closes it;
// - an `aws` cluster's workflow runs the gpu-cluster stack, which cannot work here (no AWS provider plugin),
//   and ends `failed` with Pulumi's reason.
// Services are called directly (the API's routes are covered in test/control-plane/).
import { createDesiredStateDelivery } from '../../control-plane/deployments/desired-state-delivery.ts';
import { ROLE_PERMISSIONS } from '../../control-plane/core/permissions.ts';
import anyTest, { type TestFn } from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { pino } from 'pino';
import type { Principal } from '../../control-plane/auth/principal.ts';
import { createSecretBox } from '../../lib/secret-box.ts';
import { GpuClusterSchema } from '../../control-plane/clusters/gpu-cluster.entity.ts';
import { createClusterOrchestrator } from '../../control-plane/clusters/orchestrator.ts';
import { createClusterService } from '../../control-plane/clusters/service.ts';
import { newId } from '../../lib/ids.ts';
import { openDatabase, type Orm } from '../../control-plane/database/orm.ts';
import { DeploymentSchema } from '../../control-plane/deployments/deployment.entity.ts';
import { createDeploymentOrchestrator } from '../../control-plane/deployments/orchestrator.ts';
import { createDeploymentService } from '../../control-plane/deployments/service.ts';
import { createHubClient } from '../../control-plane/models/hub.ts';
import { createModelService } from '../../control-plane/models/service.ts';
import { GpuUnavailableError } from '../../control-plane/core/errors.ts';
import { createCursorCodec } from '../../control-plane/core/pagination.ts';
import { OrganizationSchema } from '../../control-plane/organizations/organization.entity.ts';
import { CircuitSchema } from '../../control-plane/recovery/circuit.entity.ts';
import { createFeatureFlags } from '../../control-plane/feature-flags/flags.ts';
import { createCircuitService } from '../../control-plane/recovery/circuits.ts';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { binaryPath } from '../../infra/tools/paths.ts';
import { clusterProgressQuery } from '../../workflows/contract/cluster.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import { SEARCH_ATTRIBUTES } from '../../workflows/contract/search-attributes.ts';
import { ensureNamespace } from '../../workflows/deployment/program.ts';
import { deploymentActivities, deploymentsQueue } from '../../workflows/deployment/queue.ts';
import { createQueueWorker } from '../../workflows/queue.ts';
import { createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';
import { testBundleDir } from '../support/temporal.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';
import { pulumiSettingsIn } from '../support/pulumi.ts';
import { createPrometheusClient } from '../../lib/prometheus/client.ts';

installTestRuntime();

interface Context {
  env: TestWorkflowEnvironment;
  orm: Orm;
  gpu: GpuCluster;
  worker: Worker;
  running: Promise<void>;
  principal: Principal;
  clusters: ReturnType<typeof createClusterService>;
  deployments: ReturnType<typeof createDeploymentService>;
  /** Pulumi's file backend and workspaces. */
  pulumiDir: string;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const [env, databaseUrl, gpu, dir] = await Promise.all([
    TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: binaryPath('temporal') }, searchAttributes: SEARCH_ATTRIBUTES } }),
    createTestDatabase(import.meta.filename),
    startTestGpuCluster(),
    mkdtemp(join(tmpdir(), 'kiln-placement-')),
  ]);
  const orm = await openDatabase(databaseUrl);
  const kubeconfigs = createSecretBox(randomBytes(32));
  // Two failures open a circuit here, so the test need not wait for five.
  const circuits = createCircuitService({ failureThreshold: 2 });
  const log = pino({ level: 'silent' });
  const clusters = createClusterService({ secrets: kubeconfigs, orchestrator: createClusterOrchestrator(env.client), circuits, log });
  const deployments = createDeploymentService({
    endpointDomain: 'endpoints.test', cursors: createCursorCodec(randomBytes(32)), orchestrator: createDeploymentOrchestrator(env.client), placement: clusters,
    delivery: createDesiredStateDelivery({ orchestrator: createDeploymentOrchestrator(env.client), log }),
    flags: createFeatureFlags(),
    budgets: { assertAllows: async () => {} },
    // No Hub here: models outside the catalog are sized as asked.
    models: createModelService({ cursors: createCursorCodec(randomBytes(32)), hub: createHubClient({ endpoint: 'http://127.0.0.1:9', token: undefined, timeoutMs: 1000 }) }),
  });
  const pulumi = pulumiSettingsIn(dir);
  // The queue as the worker ships it, with this file's circuits and a quicker readiness poll (no webhooks here).
  const worker = await createQueueWorker(deploymentsQueue, {
    connection: env.nativeConnection,
    bundleDir: testBundleDir(),
    // Fixed replica counts here: the autoscaler never reads this (absent) Prometheus.
    activities: deploymentActivities({ orm, kubeconfigs, pulumi, circuits, pollIntervalMs: 200, unschedulableGraceMs: 3000, prometheus: createPrometheusClient('http://127.0.0.1:9') }),
  });
  const em = orm.em.fork();
  const organization = em.create(OrganizationSchema, { id: newId('org'), name: 'Placement', slug: `placement-${Date.now()}`, defaultRegion: 'us-east-1', plan: 'growth', creditsCents: 1_000_000 });
  await em.flush();
  const principal: Principal = {
    kind: 'session', userId: 'usr_placement', organizationId: organization.id, plan: 'growth', role: 'owner', permissions: ROLE_PERMISSIONS.owner, scope: 'full_access', platformAdmin: false,
  };
  // The one cluster deployments can land on: the real local cluster, registered by its kubeconfig.
  await clusters.create(orm.em.fork(), { provider: 'kubernetes', name: 'local', kubeconfig: await readFile(gpu.kubeconfig, 'utf8') });
  t.context = { env, orm, gpu, worker, running: worker.run(), principal, clusters, deployments, pulumiDir: dir };
});
test.after.always(async (t) => {
  t.context.worker?.shutdown();
  await t.context.running;
  await t.context.orm?.close();
  await t.context.env?.teardown();
  await t.context.gpu?.stop();
});

const deploymentRow = (t: { context: Context }, id: string) => t.context.orm.em.fork().findOneOrFail(DeploymentSchema, id);
const circuitRow = (t: { context: Context }, gpuType: string) => t.context.orm.em.fork().findOne(CircuitSchema, { provider: 'kubernetes', gpuType });

interface Pod { spec: { nodeName?: string }; status: { conditions?: { type: string; status: string }[] } }
const isReady = (p: Pod) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

test.serial('a deployment is provisioned with the kubeconfig of the cluster it was placed on, and runs there', async (t) => {
  const created = await t.context.deployments.create(t.context.orm.em.fork(), t.context.principal, {
    name: 'chat', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas: 2,
  });
  const local = await t.context.orm.em.fork().findOneOrFail(GpuClusterSchema, { name: 'local' });
  t.is((await deploymentRow(t, created.id)).cluster?.id, local.id);

  const running = await eventually('running', async () => {
    const row = await deploymentRow(t, created.id);
    if (row.status === 'failed') throw new Error(`failed: ${row.failureReason}`);
    return row.status === 'running' && row;
  }, 120_000);
  t.is(running.currentReplicas, 2);
  // What the workflow applied is on the registered cluster, and the readiness it waited for was read there.
  const namespace = namespaceOf(t.context.principal.organizationId);
  const pods = await t.context.gpu.api.get<{ items: Pod[] }>(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent('app.kubernetes.io/instance=chat')}`);
  t.deepEqual(pods.items.filter(isReady).map((p) => p.spec.nodeName).sort(), ['gpu-nvidia-l4-0', 'gpu-nvidia-l4-1']);
  t.like(await circuitRow(t, 'nvidia-l4'), { failures: 0, openedAt: null }, 'the successful attempt was recorded');
});

test.serial('drift: after kubectl scale, the deployment\'s next operation (a stop) reports the field in applyStack\'s result in the workflow history', async (t) => {
  const { deployments, orm, principal, gpu, env } = t.context;
  const chat = await orm.em.fork().findOneOrFail(DeploymentSchema, { name: 'chat', organization: principal.organizationId });
  const path = `/apis/apps/v1/namespaces/${namespaceOf(principal.organizationId)}/deployments/chat`;
  // An operator scales by hand, as `kubectl scale` does (the scale subresource, under its own field manager).
  await gpu.api.request('PATCH', `${path}/scale?fieldManager=kubectl-scale`, { spec: { replicas: 1 } }, 'application/merge-patch+json');
  await deployments.act(orm.em.fork(), principal, chat.id, { action: 'stop' });

  const drift = await eventually('the stop\'s applyStack to complete', async () => {
    const events = (await env.client.workflow.getHandle(chat.id).fetchHistory()).events ?? [];
    const applied = events.filter((e) => e.activityTaskCompletedEventAttributes).map((e) => {
      const payload = e.activityTaskCompletedEventAttributes!.result?.payloads?.[0];
      return payload?.data?.length ? JSON.parse(Buffer.from(payload.data).toString()) as { serviceUrl?: string; drift?: string[] } : {};
    }).filter((result) => result.serviceUrl);
    return applied.length >= 2 && applied.at(-1)!.drift;
  }, 120_000);
  t.deepEqual(drift, ['kubernetes:apps/v1:Deployment chat-deployment spec.replicas: 2 -> 1']);
  await eventually('stopped', async () => (await deploymentRow(t, chat.id)).status === 'stopped', 120_000);
  t.is(await gpu.api.get(path).catch(() => undefined), undefined, 'the stop removed the Deployment');
});

test.serial('a first rollout that cannot place every replica fails and removes the pods it placed: no GPU stays held, and Kiln shows and bills 0', async (t) => {
  const { deployments, orm, principal, gpu } = t.context;
  // Two L4 nodes of one GPU each (the chat deployment is stopped): three replicas cannot all be placed.
  const created = await deployments.create(orm.em.fork(), principal, { name: 'toomany', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas: 3, minReplicas: 3, maxReplicas: 3 });
  const failed = await eventually('failed', async () => {
    const row = await deploymentRow(t, created.id);
    return row.status === 'failed' && row;
  }, 120_000);
  t.regex(failed.failureReason ?? '', /^1 of 3 replicas cannot be placed: .*Insufficient nvidia\.com\/gpu.*; the replicas it placed were removed, so it holds no GPUs$/);
  t.is(failed.currentReplicas, 0);
  const selector = encodeURIComponent('app.kubernetes.io/instance=toomany');
  const pods = await eventually('its pods gone', async () => {
    const list = await gpu.api.get<{ items: Pod[] }>(`/api/v1/namespaces/${namespaceOf(principal.organizationId)}/pods?labelSelector=${selector}`);
    return list.items.length === 0 && list.items;
  }, 60_000);
  t.deepEqual(pods, []);
  t.is(await gpu.api.get(`/apis/apps/v1/namespaces/${namespaceOf(principal.organizationId)}/deployments/toomany`).catch(() => undefined), undefined);
});

test.serial('failed attempts open the circuit, which refuses the next attempt; after the cool-down a trial closes it', async (t) => {
  const { deployments, principal, orm, gpu } = t.context;
  // The cluster refuses: a quota in the organization's namespace allowing no more Deployments than it has.
  const namespace = namespaceOf(principal.organizationId);
  await ensureNamespace(gpu.api, namespace);
  const present = String((await gpu.api.get<{ items: unknown[] }>(`/apis/apps/v1/namespaces/${namespace}/deployments`)).items.length);
  const quota = `/api/v1/namespaces/${namespace}/resourcequotas/no-more-deployments`;
  await gpu.api.request('POST', `/api/v1/namespaces/${namespace}/resourcequotas`, {
    apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'no-more-deployments' }, spec: { hard: { 'count/deployments.apps': present } },
  });
  // Until the quota controller has counted what is there, the API server refuses for another reason.
  await eventually('the quota counted', async () => (await gpu.api.get<{ status?: { used?: Record<string, string> } }>(quota)).status?.used?.['count/deployments.apps'] === present);
  const created = await deployments.create(orm.em.fork(), principal, {
    name: 'flaky', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-h100-80gb',
  });
  // Attempt 1 and its retry fail in `pulumi up`, the API server refusing the Deployment (two failures open the
  // circuit); the third is refused.
  const failed = await eventually('failed', async () => {
    const row = await deploymentRow(t, created.id);
    return row.status === 'failed' && row;
  }, 120_000);
  const circuit = await circuitRow(t, 'nvidia-h100-80gb');
  t.like(circuit, { failures: 2 });
  // The provider's report of the API server's refusal.
  t.regex(circuit!.lastFailure ?? '', /Deployment::flaky-deployment" was not successfully created by the Kubernetes API server: deployments\.apps "flaky" is forbidden: exceeded quota: no-more-deployments/);
  // Another organization's failure is not repeated in this deployment's reason.
  t.is(failed.failureReason, `the kubernetes/nvidia-h100-80gb provisioning circuit is open after 2 failed attempts; it half-opens at ${circuit!.halfOpensAt!.toISOString()}; the replicas it placed were removed, so it holds no GPUs`);
  // While open, creation is refused too, and nothing is created.
  const count = await orm.em.fork().count(DeploymentSchema, {});
  const refused = await deployments.create(orm.em.fork(), principal, { name: 'another', model: 'a/b', runtime: 'vllm', gpu: 'nvidia-h100-80gb' }).catch((e: unknown) => e);
  t.true(refused instanceof GpuUnavailableError);
  t.is(await orm.em.fork().count(DeploymentSchema, {}), count);

  // The cool-down passes; the cluster accepts Deployments again; a retry is the half-open circuit's trial.
  await gpu.api.request('DELETE', quota);
  await orm.em.fork().nativeUpdate(CircuitSchema, { provider: 'kubernetes', gpuType: 'nvidia-h100-80gb' }, { halfOpensAt: new Date(Date.now() - 1000) });
  await deployments.recover(orm.em.fork(), principal, created.id, 'retry');
  await eventually('running', async () => (await deploymentRow(t, created.id)).status === 'running', 120_000);
  t.like(await circuitRow(t, 'nvidia-h100-80gb'), { failures: 0, openedAt: null, halfOpensAt: null, trialStartedAt: null });
});

test.serial('an aws cluster\'s workflow runs the gpu-cluster stack and ends failed with Pulumi\'s reason; DELETE then removes it', async (t) => {
  const { clusters, orm, env } = t.context;
  const created = await clusters.create(orm.em.fork(), {
    provider: 'aws', name: 'eks', region: 'us-east-1', subnetIds: ['subnet-0123abcd', 'subnet-4567ef01'],
    nodeGroups: [{ gpuType: 'nvidia-a100-80gb', minSize: 0, desiredSize: 1, maxSize: 2 }],
  });
  t.is(created.status, 'provisioning');
  const failed = await eventually('failed', async () => {
    const row = await orm.em.fork().findOneOrFail(GpuClusterSchema, created.id);
    return row.status === 'failed' && row;
  }, 180_000);
  // The AWS provider plugin cannot be had on this machine; that is the reason kept, and nothing is faked.
  t.log(failed.failureReason);
  t.regex(failed.failureReason ?? '', /no resource plugin 'pulumi-resource-aws' found/);
  t.deepEqual(failed.gpus, []);
  t.is(failed.sealedKubeconfig ?? null, null);
  t.like(await env.client.workflow.getHandle(created.id).query(clusterProgressQuery), { status: 'failed', observedGeneration: 1 });
  // Not worth a retry: the stack ran once.
  const history = await env.client.workflow.getHandle(created.id).fetchHistory();
  const attempts = (history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.attempt! > 1);
  t.deepEqual(attempts, []);
  const a100 = await t.context.deployments.create(orm.em.fork(), t.context.principal, { name: 'big', model: 'a/b', runtime: 'vllm', gpu: 'nvidia-a100-80gb' }).catch((e: unknown) => e);
  t.true(a100 instanceof GpuUnavailableError, 'a failed cluster serves nothing');

  await clusters.remove(orm.em.fork(), created.id);
  t.like(await env.client.workflow.getHandle(created.id).result(), { status: 'deleted' });
  t.is((await orm.em.fork().findOneOrFail(GpuClusterSchema, created.id)).status, 'deleted');
});

test.serial('a dry run says how many replicas fit now, from the nodes\' allocatable GPUs less what pods request, each replica on one node', async (t) => {
  const { deployments, principal, orm, gpu } = t.context;
  // One H100 node of 8 GPUs (the flaky deployment's trial may still hold one): replicas of 4 GPUs, each on one node.
  const holder = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gpu-holder', namespace: 'default' }, spec: {
    nodeName: 'gpu-nvidia-h100-80gb-0', tolerations: [{ operator: 'Exists' }],
    containers: [{ name: 'hold', image: 'busybox', resources: { limits: { 'nvidia.com/gpu': '2' } } }],
  } };
  const request = { name: 'big', model: 'meta-llama/Llama-3.1-70B-Instruct', runtime: 'vllm', gpu: 'nvidia-h100-80gb', replicas: 3, gpusPerReplica: 4, contextLength: 8192 } as const;
  const reasonOf = (run: Awaited<ReturnType<typeof deployments.dryRun>>) => run.checks.find((c) => c.check === 'capacity');
  const before = await deployments.dryRun(orm.em.fork(), principal, request, { preview: false });
  const free = before.capacity[0]!.gpusFree;
  t.true(free >= 6 && free <= 8, `${free} H100s free`);
  t.like(before.capacity[0], { name: 'local', replicasFit: Math.floor(free / 4), measuredFrom: 'nodes', note: null });
  // Twelve GPUs on one 8-GPU node: never all three.
  t.deepEqual(reasonOf(before), { check: 'capacity', passed: false, status: 'failed', reason: `Only ${Math.floor(free / 4)} of 3 replicas fit now on GPU cluster local: ${free} GPU(s) free on its nodes, 4 per replica; the cluster has no node pool Kiln can grow; lower replicas, or free or add GPUs` });
  t.false(before.valid);
  // A pod outside Kiln requesting 2 of them: its GPUs are no longer free.
  await gpu.api.request('POST', '/api/v1/namespaces/default/pods', holder);
  t.teardown(() => gpu.api.request('DELETE', '/api/v1/namespaces/default/pods/gpu-holder').catch(() => undefined));
  const held = await deployments.dryRun(orm.em.fork(), principal, { ...request, replicas: 1 }, { preview: false });
  t.like(held.capacity[0], { gpusFree: free - 2, replicasFit: 1 });
  t.deepEqual(reasonOf(held), { check: 'capacity', passed: true, status: 'passed', reason: `1 of 1 replicas fit now on GPU cluster local: ${free - 2} GPU(s) free on its nodes, 4 per replica` });
});

test.serial('a dry run previews the deployment with the real Pulumi engine on the cluster it would be placed on, and creates nothing', async (t) => {
  const { deployments, principal, orm, gpu } = t.context;
  const before = await orm.em.fork().count(DeploymentSchema, {});
  const dryRun = await deployments.dryRun(orm.em.fork(), principal, {
    name: 'preview-me', model: 'meta-llama/Llama-3.1-8B-Instruct', runtime: 'vllm', gpu: 'nvidia-l4', replicas: 2, contextLength: 8192,
  });
  t.true(dryRun.valid, JSON.stringify(dryRun.checks));
  t.deepEqual(dryRun.checks.map((c) => c.check), ['name', 'model', 'replicas', 'model_fit', 'accepting', 'placement', 'capacity', 'credits', 'budget']);
  t.like(dryRun.deployment, { gpusPerReplica: 1, contextLength: 8192, replicas: 2, cluster: { name: 'local' } });
  // Read from the cluster's nodes: its two L4 nodes of one GPU each, nothing holding them (the chat deployment is stopped).
  t.deepEqual(dryRun.capacity, [{ clusterId: dryRun.deployment.cluster!.id, name: 'local', gpusFree: 2, replicasFit: 2, measuredFrom: 'nodes', note: null }]);
  // Two L4s at 80 cents an hour each.
  t.like(dryRun.cost, { hourlyCents: 160, dailyCents: 3840 });
  // The objects the vllm-deployment component declares, each a create, as the engine planned them.
  const planned = dryRun.plan!.resources.map((r) => `${r.operation} ${r.type} ${r.name}`).sort();
  t.is(dryRun.plan!.failure, null);
  t.true(planned.includes('create kubernetes:apps/v1:Deployment preview-me-deployment'), planned.join('\n'));
  t.true(planned.includes('create kubernetes:core/v1:Service preview-me-service'), planned.join('\n'));
  t.true(planned.includes('create kubernetes:policy/v1:PodDisruptionBudget preview-me-pdb'), planned.join('\n'));
  t.true(dryRun.plan!.previewMs > 0);
  // Nothing was created: no row, no object in the cluster, no stack left behind.
  t.is(await orm.em.fork().count(DeploymentSchema, {}), before);
  const namespace = namespaceOf(principal.organizationId);
  const objects = await gpu.api.get<{ items: Array<{ metadata: { name: string } }> }>(`/apis/apps/v1/namespaces/${namespace}/deployments`).catch(() => ({ items: [] }));
  t.false(objects.items.some((o) => o.metadata.name.startsWith('preview-me')));
  const stacks = await readdir(join(t.context.pulumiDir, 'state', '.pulumi', 'stacks', 'kiln-deployment')).catch(() => [] as string[]);
  // (The file backend keeps a .bak of a removed stack's last state: history, not a stack.)
  t.false(stacks.some((file) => file.startsWith('pre_') && file.endsWith('.json')), stacks.join(', '));
});
