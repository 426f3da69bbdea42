// The deployment workflow on a real Temporal dev server, with Kiln's real activities running the real Pulumi
// CLI on a file backend. The stack program here (fixtures/test-program.ts) declares no Kubernetes objects,
// which keeps the workflow's logic apart from any cluster: readiness is whatever each test makes it, and
// status writes are observed through the activities' dependencies. Kiln's real program on a real cluster
// is covered by test/e2e/ and cluster-placement.test.ts.
import anyTest, { type TestFn } from 'ava';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { binaryPath } from '../../infra/tools/paths.ts';
import {
  DEPLOYMENT_WORKFLOW, desiredStateSignal, progressQuery, wakeSignal, type DeploymentWorkflowInput, type DesiredDeployment,
} from '../../workflows/contract/deployment.ts';
import type { MeasuredLoad } from '../../catalog/autoscaling.ts';
import { SEARCH_ATTRIBUTES } from '../../workflows/contract/search-attributes.ts';
import { createDeploymentActivities, type Readiness, type StatusUpdate } from '../../workflows/deployment/activities.ts';
import { checkDeployment } from '../../workflows/deployment/program.ts';
import { deploymentsQueue } from '../../workflows/deployment/queue.ts';
import { createQueueWorker } from '../../workflows/queue.ts';
import type { TestProgramInput } from './fixtures/test-program.ts';
import { eventually } from '../support/eventually.ts';
import { testBundleDir } from '../support/temporal.ts';
import { installTestRuntime } from '../support/temporal-runtime.ts';
import { pulumiSettingsIn } from '../support/pulumi.ts';

/** The one cluster these tests' deployments run on (its kubeconfig is not read by the test programs). */
const testCluster = { clusterId: 'clu_test', provider: 'kubernetes', kubeconfig: '' };

installTestRuntime();

interface Context {
  env: TestWorkflowEnvironment;
  dir: string;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  t.context.env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: binaryPath('temporal') }, searchAttributes: SEARCH_ATTRIBUTES },
  });
  t.context.dir = await mkdtemp(join(tmpdir(), 'kiln-workflow-'));
});
test.after.always(async (t) => t.context.env?.teardown());

/** One test's world: its own task queue, status log and controllable readiness. */
function harness(t: { context: Context; title: string }, options: { applyDelayMs?: number; failProbeTimes?: number } = {}) {
  const statuses: StatusUpdate[] = [];
  /** What each `pulumi up` was asked to run. */
  const applies: { running: boolean; replicas: number }[] = [];
  const readiness: { next: () => Readiness } = { next: () => ({ readyReplicas: Number.MAX_SAFE_INTEGER }) };
  // The load the autoscaler reads (Prometheus's reading of the model servers, in production).
  const load: { now: MeasuredLoad; readings: number } = { now: { inFlight: 0, recentRequests: 0 }, readings: 0 };
  let probeFailures = options.failProbeTimes ?? 0;
  const taskQueue = `q-${t.title.replace(/\W+/g, '-').slice(0, 40)}`;
  const activities = createDeploymentActivities({
    pulumi: pulumiSettingsIn(t.context.dir),
    programFor: (target) => (applies.push({ running: target.desired.running, replicas: target.desired.replicas }), {
      programModule: new URL('./fixtures/test-program.ts', import.meta.url).href,
      programExport: 'testProgram',
      programInput: { name: target.name, replicas: target.desired.replicas, model: target.desired.model, delayMs: options.applyDelayMs } satisfies TestProgramInput,
    }),
    check: checkDeployment,
    // The cluster and its circuits are not what these tests look at (see cluster-placement.test.ts).
    clusters: { accessFor: async () => testCluster, accessToCluster: async () => testCluster },
    namespaces: { ensure: async () => {} },
    circuits: { acquire: async () => undefined, recordSuccess: async () => {}, recordFailure: async () => {} },
    statuses: { record: async (update) => { statuses.push(update); } },
    readiness: {
      probe: async () => {
        if (probeFailures-- > 0) throw new Error('connect ECONNREFUSED: the Kubernetes API server did not answer');
        return readiness.next();
      },
      replaceLost: async () => [],
    },
    load: { measure: async () => { load.readings += 1; return load.now; } },
    autoscaleIntervalMs: 200,
    unschedulableGraceMs: 1500,
    pollIntervalMs: 200,
  });
  const newWorker = () => createQueueWorker(deploymentsQueue, { connection: t.context.env.nativeConnection, bundleDir: testBundleDir(), taskQueue, activities });
  return { statuses, applies, readiness, load, taskQueue, newWorker };
}

/** What the probe reports when the cluster has no room for the pods. */
const UNSCHEDULABLE: Readiness = { readyReplicas: 0, unschedulableReason: '0/8 nodes are available: 8 Insufficient nvidia.com/gpu.' };

let ids = 0;
function desired(overrides: Partial<DesiredDeployment> = {}): DesiredDeployment {
  return { generation: 1, model: 'meta-llama/Llama-3.1-8B-Instruct', gpu: 'nvidia-l4', replicas: 1, minReplicas: 1, maxReplicas: 3, running: true, restarts: 0, refreshes: 0, deleted: false, forceDelete: false, ...overrides };
}

async function start(t: { context: Context }, taskQueue: string, first = desired()) {
  const deploymentId = `dep_test${++ids}${Date.now().toString(36)}`;
  const input: DeploymentWorkflowInput = { deploymentId, organizationId: 'org_test', name: `model-${ids}`, desired: first };
  const handle = await t.context.env.client.workflow.start(DEPLOYMENT_WORKFLOW, { taskQueue, workflowId: deploymentId, args: [input] });
  return Object.assign(handle, { name: input.name });
}


const edges = (statuses: StatusUpdate[]) => statuses.map((s) => s.status);
const events = (statuses: StatusUpdate[]) => statuses.flatMap((s) => (s.event ? [s.event] : []));
const last = (statuses: StatusUpdate[]) => statuses.at(-1)?.status;

// Each step runs real Pulumi operations (a process each): on a busy 2-core machine a refresh and a rollout
// can take over a minute, so waits here allow three.
const settled = <T>(what: string, probe: () => T | undefined | false) => eventually(what, probe, 180_000);

test('a deployment provisions to running, then scales, stops, starts and is deleted', async (t) => {
  const h = harness(t);
  const worker = await h.newWorker();
  await worker.runUntil(async () => {
    const handle = await start(t, h.taskQueue);
    await settled('running', () => last(h.statuses) === 'running');
    t.deepEqual(edges(h.statuses), ['pending', 'deploying', 'running']);
    t.like(await handle.query(progressQuery), { status: 'running', observedGeneration: 1, serviceUrl: `http://${handle.name}.test` });

    await handle.signal(desiredStateSignal, desired({ generation: 2, replicas: 3 }));
    await settled('scaled', () => h.statuses.some((s) => s.event === 'deployment.scaled'));
    t.like(h.statuses.at(-1), { replicas: 3, previousReplicas: 1 });

    await handle.signal(desiredStateSignal, desired({ generation: 3, replicas: 3, running: false }));
    await settled('stopped', () => last(h.statuses) === 'stopped');
    t.is(h.statuses.at(-1)?.replicas, 0);
    await handle.signal(desiredStateSignal, desired({ generation: 4, replicas: 3 }));
    await settled('running again', () => last(h.statuses) === 'running' && h.statuses.at(-1)!.generation === 4);

    await handle.signal(desiredStateSignal, desired({ generation: 5, replicas: 3, deleted: true }));
    const result = await handle.result();
    t.is(result.status, 'deleted');
    t.deepEqual(edges(h.statuses), [
      'pending', 'deploying', 'running', 'scaling', 'running', 'stopping', 'stopped', 'deploying', 'running', 'deleting', 'deleted',
    ]);
    t.deepEqual(events(h.statuses), [
      'deployment.created', 'deployment.running', 'deployment.scaled', 'deployment.stopped', 'deployment.running', 'deployment.deleted',
    ]);
  });
});

test('an update rolls the new model out through updating; repeated and old messages are ignored', async (t) => {
  const h = harness(t);
  const worker = await h.newWorker();
  await worker.runUntil(async () => {
    const handle = await start(t, h.taskQueue);
    await settled('running', () => last(h.statuses) === 'running');
    const update = desired({ generation: 2, model: 'hf://mistralai/Mistral-7B-Instruct-v0.3' });
    await handle.signal(desiredStateSignal, update);
    await handle.signal(desiredStateSignal, update);
    await handle.signal(desiredStateSignal, desired({ generation: 1, replicas: 2 }));
    await settled('updated', () => last(h.statuses) === 'running' && h.statuses.at(-1)!.generation === 2);
    await sleep(500);
    t.deepEqual(edges(h.statuses), ['pending', 'deploying', 'running', 'updating', 'running']);
    t.like((await handle.describe()).memo, { name: handle.name, model: 'hf://mistralai/Mistral-7B-Instruct-v0.3' }, 'the Temporal UI shows the new model');
    t.is(h.statuses.at(-1)?.replicas, 1, 'the stale generation-1 scale was ignored');
  });
});

test('after a failed change the next desired state is applied in full, even one equal to what ran before', async (t) => {
  const h = harness(t);
  const worker = await h.newWorker();
  await worker.runUntil(async () => {
    const handle = await start(t, h.taskQueue);
    await settled('running', () => last(h.statuses) === 'running');
    h.readiness.next = () => UNSCHEDULABLE;
    await handle.signal(desiredStateSignal, desired({ generation: 2, replicas: 3 }));
    await settled('failed', () => last(h.statuses) === 'failed');
    // The scale that could not be placed is rolled back: the last good configuration keeps serving, and is what Kiln shows.
    t.deepEqual(h.applies.at(-1), { running: true, replicas: 1 });
    t.like(h.statuses.at(-1), { replicas: 1, failureReason: '3 of 3 replicas cannot be placed: 0/8 nodes are available: 8 Insufficient nvidia.com/gpu.; no node pool can grow; the last good configuration (1 replica) still serves' });
    h.readiness.next = () => ({ readyReplicas: Number.MAX_SAFE_INTEGER });
    await handle.signal(desiredStateSignal, desired({ generation: 3, replicas: 1 }));
    await settled('running again', () => last(h.statuses) === 'running' && h.statuses.at(-1)!.generation === 3);
    t.deepEqual(edges(h.statuses), ['pending', 'deploying', 'running', 'scaling', 'failed', 'deploying', 'running']);
  });
});

test('a transient failure is retried and the deployment still reaches running', async (t) => {
  const h = harness(t, { failProbeTimes: 2 });
  const worker = await h.newWorker();
  await worker.runUntil(async () => {
    await start(t, h.taskQueue);
    await settled('running', () => last(h.statuses) === 'running');
    t.deepEqual(edges(h.statuses), ['pending', 'deploying', 'running']);
  });
});

test('pods that cannot be placed fail the deployment with the reason; a new desired state recovers it', async (t) => {
  const h = harness(t);
  h.readiness.next = () => UNSCHEDULABLE;
  const worker = await h.newWorker();
  await worker.runUntil(async () => {
    const handle = await start(t, h.taskQueue);
    await settled('failed', () => last(h.statuses) === 'failed');
    const failed = h.statuses.at(-1)!;
    t.is(failed.event, 'deployment.failed');
    t.regex(failed.failureReason ?? '', /1 of 1 replicas cannot be placed: 0\/8 nodes are available: 8 Insufficient nvidia\.com\/gpu.*; no node pool can grow; the replicas it placed were removed, so it holds no GPUs$/);
    // Nothing ran before: what was placed is removed (the stack applied with nothing running), and shown and billed as 0.
    t.deepEqual(h.applies.at(-1), { running: false, replicas: 1 });
    t.is(failed.replicas, 0);
    t.like(await handle.query(progressQuery), { status: 'failed' });

    h.readiness.next = () => ({ readyReplicas: 1 });
    await handle.signal(desiredStateSignal, desired({ generation: 2 }));
    await settled('running', () => last(h.statuses) === 'running');
    t.deepEqual(events(h.statuses), ['deployment.created', 'deployment.failed', 'deployment.running']);
  });
});

test('deleting while deploying cancels the rollout and deletes', async (t) => {
  const h = harness(t);
  h.readiness.next = () => ({ readyReplicas: 0 }); // pods never become Ready
  const worker = await h.newWorker();
  await worker.runUntil(async () => {
    const handle = await start(t, h.taskQueue);
    await settled('deploying', () => last(h.statuses) === 'deploying');
    await sleep(1500);
    await handle.signal(desiredStateSignal, desired({ generation: 2, deleted: true }));
    t.is((await handle.result()).status, 'deleted');
    t.deepEqual(edges(h.statuses), ['pending', 'deploying', 'deleting', 'deleted'], JSON.stringify(h.statuses));
    t.deepEqual(events(h.statuses), ['deployment.created', 'deployment.deleted']);
  });
});

test('a worker killed mid-provisioning is replaced and the deployment finishes once', async (t) => {
  const h = harness(t, { applyDelayMs: 4000 });
  const first = await h.newWorker();
  const firstRun = first.run();
  const handle = await start(t, h.taskQueue);
  await settled('deploying', () => last(h.statuses) === 'deploying');
  await sleep(1500); // inside `pulumi up`
  first.shutdown();
  await firstRun;

  const second = await h.newWorker();
  await second.runUntil(async () => {
    await settled('running', () => last(h.statuses) === 'running');
    t.is(events(h.statuses).filter((e) => e === 'deployment.running').length, 1);
    t.like(await handle.query(progressQuery), { status: 'running' });
  });
});

test('a deployment that breaks a stack rule fails at once with the rule, without retries', async (t) => {
  const h = harness(t);
  const worker = await h.newWorker();
  await worker.runUntil(async () => {
    const handle = await start(t, h.taskQueue, desired({ replicas: 5, maxReplicas: 3 }));
    await settled('failed', () => last(h.statuses) === 'failed');
    t.deepEqual(edges(h.statuses), ['pending', 'deploying', 'failed']);
    t.regex(h.statuses.at(-1)?.failureReason ?? '', /replicas/i);
    // Still Running in the Temporal UI (it waits for a retry): its Current Details say it failed, why, and what next.
    const { currentDetails } = await handle.query<{ currentDetails: string }>('__temporal_workflow_metadata');
    t.regex(currentDetails, /^\*\*\S+: failed\*\* \(generation 1\)\n\n.*replicas.*\n\nThis workflow stays open to take a retry/is);
  });
});

test('refresh-and-retry runs pulumi refresh before the new rollout', async (t) => {
  const h = harness(t);
  h.readiness.next = () => UNSCHEDULABLE;
  const worker = await h.newWorker();
  await worker.runUntil(async () => {
    const handle = await start(t, h.taskQueue);
    await settled('failed', () => last(h.statuses) === 'failed');
    h.readiness.next = () => ({ readyReplicas: 1 });
    await handle.signal(desiredStateSignal, desired({ generation: 2, refreshes: 1 }));
    await settled('running', () => last(h.statuses) === 'running');
    const history = await handle.fetchHistory();
    const activities = (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    // No pool could grow; the failed first rollout's clean-up (an applyStack with nothing running) comes before the refresh.
    t.deepEqual(activities.filter((a) => a !== 'recordStatus' && a !== 'replaceLostReplicas'), ['applyStack', 'waitUntilReady', 'growNodePool', 'applyStack', 'refreshStack', 'applyStack', 'waitUntilReady']);
  });
});

test('a teardown that keeps failing leaves the deployment failed until a force-delete ends it', async (t) => {
  const h = harness(t);
  const worker = await h.newWorker();
  await worker.runUntil(async () => {
    const handle = await start(t, h.taskQueue);
    await settled('running', () => last(h.statuses) === 'running');
    // The stack's state file is damaged: every Pulumi operation on it now fails.
    const stateFile = join(t.context.dir, 'state', '.pulumi', 'stacks', 'kiln-deployment', `${handle.workflowId}.json`);
    await writeFile(stateFile, '{ not json');
    await handle.signal(desiredStateSignal, desired({ generation: 2, deleted: true }));
    await settled('failed', () => last(h.statuses) === 'failed');
    t.regex(h.statuses.at(-1)!.failureReason ?? '', /^deletion failed: /);

    await handle.signal(desiredStateSignal, desired({ generation: 3, deleted: true, forceDelete: true }));
    t.is((await handle.result()).status, 'deleted');
    t.regex(h.statuses.at(-1)!.failureReason ?? '', /^force-deleted; the teardown failed and resources may remain: /);
    t.deepEqual(events(h.statuses), ['deployment.created', 'deployment.running', 'deployment.failed', 'deployment.deleted']);
  });
});

test('the autoscaler adds replicas as soon as the load needs them and removes them once it has stayed low; each scale is an event', async (t) => {
  const h = harness(t);
  const worker = await h.newWorker();
  await worker.runUntil(async () => {
    const policy = { targetRequestsPerReplica: 4, scaleDownDelaySeconds: 5, scaleToZeroAfterSeconds: 600 };
    const handle = await start(t, h.taskQueue, desired({ replicas: 1, minReplicas: 1, maxReplicas: 4, autoscaling: policy }));
    await settled('running', () => last(h.statuses) === 'running');
    h.load.now = { inFlight: 10, recentRequests: 40 };
    await settled('scaled up', () => last(h.statuses) === 'running' && h.statuses.at(-1)!.replicas === 3);
    const up = h.statuses.find((s) => s.event === 'deployment.scaled')!;
    t.like(up, { replicas: 3, sequence: 1, generation: 1, reason: '10 requests in flight need 3 replica(s) at 4 each' });
    t.like(await handle.query(progressQuery), { status: 'running', observedGeneration: 1 });

    h.load.now = { inFlight: 50, recentRequests: 200 };
    await settled('at its maximum', () => h.statuses.at(-1)!.replicas === 4 && last(h.statuses) === 'running');

    const lowAt = Date.now();
    h.load.now = { inFlight: 2, recentRequests: 60 };
    await settled('scaled down', () => h.statuses.at(-1)!.replicas === 1 && last(h.statuses) === 'running');
    t.true(Date.now() - lowAt >= 5000, 'not before the load stayed low for scaleDownDelaySeconds');
    const scaled = h.statuses.filter((s) => s.event === 'deployment.scaled');
    t.deepEqual(scaled.map((s) => [s.previousReplicas, s.replicas, s.sequence]), [[1, 3, 1], [3, 4, 2], [4, 1, 3]]);

    // A replica count the user sets replaces the autoscaler's, even the one asked for before (1).
    await handle.signal(desiredStateSignal, desired({ generation: 2, replicas: 1, replicaRequests: 1, minReplicas: 1, maxReplicas: 4, autoscaling: { ...policy, scaleDownDelaySeconds: 600 } }));
    h.load.now = { inFlight: 8, recentRequests: 60 };
    await settled('the load', () => h.statuses.at(-1)!.replicas === 2 && last(h.statuses) === 'running');
    // Idle now, the autoscaler would keep 2 for its 600 s delay: the user's 1 applies at once.
    h.load.now = { inFlight: 0, recentRequests: 60 };
    await handle.signal(desiredStateSignal, desired({ generation: 3, replicas: 1, replicaRequests: 2, minReplicas: 1, maxReplicas: 4, autoscaling: { ...policy, scaleDownDelaySeconds: 600 } }));
    await settled('the user\'s count', () => h.statuses.at(-1)!.generation === 3 && h.statuses.at(-1)!.replicas === 1 && last(h.statuses) === 'running');
    await handle.signal(desiredStateSignal, desired({ generation: 4, deleted: true }));
    await handle.result();
  });
});

test('with minReplicas 0 an idle deployment scales to zero, and a wake runs a replica again', async (t) => {
  const h = harness(t);
  const worker = await h.newWorker();
  await worker.runUntil(async () => {
    const policy = { targetRequestsPerReplica: 4, scaleDownDelaySeconds: 5, scaleToZeroAfterSeconds: 10 };
    const handle = await start(t, h.taskQueue, desired({ replicas: 1, minReplicas: 0, maxReplicas: 2, autoscaling: policy }));
    await settled('running', () => last(h.statuses) === 'running');
    const runningAt = Date.now();
    h.load.now = { inFlight: 0, recentRequests: 0 };
    await settled('scaled to zero', () => last(h.statuses) === 'scaled_to_zero');
    t.true(Date.now() - runningAt >= 10_000, 'not before scaleToZeroAfterSeconds without a request');
    t.like(h.statuses.at(-1), { replicas: 0, previousReplicas: 1, event: 'deployment.scaled', reason: 'no request for 10 s' });
    t.like(await handle.query(progressQuery), { status: 'scaled_to_zero' });

    // Scaled to zero there is nothing to measure: the workflow waits for a wake.
    const readings = h.load.readings;
    await sleep(1000);
    t.is(h.load.readings, readings);

    await handle.signal(wakeSignal);
    await handle.signal(wakeSignal); // a second request while waking changes nothing
    await settled('woken', () => last(h.statuses) === 'running');
    t.like(h.statuses.at(-1), { replicas: 1, previousReplicas: 0, event: 'deployment.scaled', reason: 'an inference request arrived while scaled to zero' });
    t.is(h.statuses.filter((s) => s.status === 'scaling').length, 2, 'one scale down, one wake');
    await handle.signal(desiredStateSignal, desired({ generation: 2, deleted: true }));
    await handle.result();
  });
});
