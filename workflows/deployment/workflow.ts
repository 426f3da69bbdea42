// One long-lived workflow per deployment (workflow id = deployment id). It converges the deployment on the
// newest desired state it was sent: provision, scale, update, stop, start, restart, delete. Every status edge
// is written by an activity, which also emits the edge's event exactly once. Deterministic: no I/O here.
import {
  ActivityCancellationType, ActivityFailure, ApplicationFailure, CancellationScope, condition, continueAsNew,
  isCancellation, patched, proxyActivities, setCurrentDetails, setHandler, upsertMemo, upsertSearchAttributes, workflowInfo,
} from '@temporalio/workflow';
import {
  desiredStateSignal, progressQuery, wakeSignal, type DeploymentEventType, type DeploymentLifecycleStatus, type DeploymentProgress,
  type DeploymentWorkflowInput, type DesiredDeployment, type AppliedDeployment,
} from '../contract/deployment.ts';
import { AUTOSCALE_INTERVAL_SECONDS, nextReplicas, type AutoscalerMemory } from '../../catalog/autoscaling.ts';
import { KilnGpuType, KilnOrganizationId, KilnStatus } from '../contract/search-attributes.ts';
import type { DeploymentActivities } from './activities.ts';

// GPU clusters' workflows and the dry run's previews share the kiln-deployments queue (deployment/queue.ts), whose bundle starts here.
export { clusterWorkflow } from '../cluster/workflow.ts';
export { previewDeploymentWorkflow } from './preview-workflow.ts';

const { recordStatus } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});
// A measurement that fails (Prometheus away) is skipped: the deployment keeps its replicas until the next one.
const { measureLoad } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { maximumAttempts: 2 },
});
// Commits a pool's new size and signals the cluster's workflow: quick, and safe to retry (its request id).
const { growNodePool } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});
// Looks for replicas on lost nodes between changes: quick, and a check that fails waits for the next.
const { replaceLostReplicas } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 2 },
});
/** How often a running deployment's replicas are checked for lost nodes while nothing else happens. */
const REPLICA_WATCH_MS = 10_000;
const { applyStack, destroyStack, refreshStack, waitUntilReady } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '30 minutes',
  // The Pulumi operations heartbeat every 5 s (pulumi/activity.ts) and the readiness poll every second: a worker
  // that dies mid-operation is noticed, and the operation retried on another, within 20 s.
  heartbeatTimeout: '20 seconds',
  // A deletion cancels a running `pulumi up`; wait until it has really stopped before destroying.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 4 },
});

export async function deploymentWorkflow(input: DeploymentWorkflowInput): Promise<DeploymentProgress> {
  const { deploymentId, organizationId, name } = input;
  let desired = input.desired;
  let applied = input.resume?.applied;
  let refreshed = input.resume?.refreshed ?? 0;
  let progress: DeploymentProgress = input.resume?.progress ?? { status: 'pending', observedGeneration: 0 };
  let inFlight: CancellationScope | undefined;
  // The memo (name, model) was set at start; it follows the model as updates roll out.
  let memoModel = input.desired.model;
  // The autoscaler's replica count between the bounds (undefined: the user's `replicas`), what it remembers
  // between measurements, how many scales it has made (each one's event is its own), and why it last scaled.
  let autoscaled = input.resume?.autoscaled;
  let memory: AutoscalerMemory = input.resume?.autoscaler ?? { changedAt: Date.now() };
  let scales = input.resume?.scales ?? 0;
  let scaleReason: string | undefined;
  // Pool growths this run has asked for: each ask's request id (with the run's id) is its own.
  let growthRequests = 0;
  // Recoveries from lost nodes so far: each one's deployment.recovered event is its own.
  let recoveries = input.resume?.recoveries ?? 0;

  setHandler(desiredStateSignal, (next) => {
    if (next.generation <= desired.generation) return; // an old or repeated message
    // A replica count the user sets replaces the autoscaler's; new bounds hold the autoscaler's within them.
    if (next.replicas !== desired.replicas || (next.replicaRequests ?? 0) !== (desired.replicaRequests ?? 0)) autoscaled = undefined;
    else if (autoscaled !== undefined) autoscaled = Math.min(next.maxReplicas, Math.max(next.minReplicas, autoscaled));
    desired = next;
    if (next.deleted) inFlight?.cancel(); // deleting beats finishing a deployment nobody wants
  });
  setHandler(progressQuery, () => progress);
  // A request reached the deployment while it ran no replica: run its minimum, at least one.
  setHandler(wakeSignal, () => {
    if (!desired.running || desired.deleted || effective(desired).replicas > 0) return;
    autoscaled = Math.max(1, desired.minReplicas);
    scaleReason = 'an inference request arrived while scaled to zero';
  });
  const effective = (d: DesiredDeployment): DesiredDeployment => (autoscaled === undefined ? d : { ...d, replicas: autoscaled });

  /** Writes one lifecycle edge: status row, event (with `details`: a scale's replicas before, a scale's or a recovery's reason), search attribute. */
  const edge = async (
    status: DeploymentLifecycleStatus, generation: number, event?: DeploymentEventType, failureReason?: string,
    details: { previousReplicas?: number; reason?: string } = {},
  ) => {
    progress = { ...progress, status, observedGeneration: generation, failureReason };
    upsertSearchAttributes([{ key: KilnStatus, value: status }, { key: KilnGpuType, value: desired.gpu }, { key: KilnOrganizationId, value: organizationId }]);
    // The Temporal UI shows a deployment's workflow as Running for its whole life (it waits for the next change,
    // a failed one for a retry): its Current Details say where the deployment stands. (No command: replay-safe.)
    setCurrentDetails(currentDetails(name, status, generation, failureReason));
    // patched(): workflows that began before the memo followed the model replay without this command.
    if (desired.model !== memoModel && patched('memo-follows-model')) {
      upsertMemo({ name, model: desired.model });
      memoModel = desired.model;
    }
    // Not cancelled with the rollout it reports on: an abandoned write could land after the next edge's.
    // Each scale, and each recovery, within a generation is an event of its own.
    const sequence = event === 'deployment.scaled' ? { sequence: scales } : event === 'deployment.recovered' ? { sequence: recoveries } : {};
    await CancellationScope.nonCancellable(() => recordStatus({ deploymentId, status, event, generation, failureReason, replicas: applied?.running ? applied.replicas : 0, ...sequence, ...details, at: Date.now() }));
  };

  const converge = async (target: DesiredDeployment, change: Change) => {
    const before = applied?.running ? applied.replicas : 0;
    await edge(change.status, target.generation);
    if (target.refreshes > refreshed) {
      await refreshStack({ deploymentId, organizationId, name, desired: target });
      refreshed = target.refreshes;
    }
    const { serviceUrl } = await applyStack({ deploymentId, organizationId, name, desired: target });
    progress = { ...progress, serviceUrl };
    if (target.running) await placeReplicas(target, change.status);
    applied = appliedOf(target);
    memory = { changedAt: Date.now() };
    if (change.event === 'deployment.scaled') scales += 1;
    const scaled = change.event === 'deployment.scaled' ? { previousReplicas: before, ...(scaleReason ? { reason: scaleReason } : {}) } : {};
    await edge(!target.running ? 'stopped' : target.replicas === 0 ? 'scaled_to_zero' : 'running', target.generation, change.event, undefined, scaled);
    scaleReason = undefined;
  };

  /**
   * Waits until every replica is Ready. Replicas the cluster cannot place for lack of GPUs ask for a node pool of
   * their GPU type to grow (the cluster's workflow adds the nodes) and are waited for again, with the growth as the
   * edge's reason, until no pool can grow: then the rollout fails, saying why. patched(): histories from before
   * pools grew replay the plain failure.
   */
  const placeReplicas = async (target: DesiredDeployment, status: DeploymentLifecycleStatus) => {
    for (;;) {
      try {
        await waitUntilReady({ deploymentId, organizationId, name, replicas: target.replicas });
        return;
      } catch (error) {
        const missingReplicas = missingReplicasOf(error);
        if (missingReplicas === undefined || !patched('pool-growth')) throw error;
        growthRequests += 1;
        const growth = await growNodePool({
          deploymentId, requestId: `${workflowInfo().runId}/${growthRequests}`, gpuType: target.gpu, missingReplicas, gpusPerReplica: target.gpusPerReplica ?? 1,
        });
        if (!growth.adding) throw ApplicationFailure.nonRetryable(`${failureReason(error)}; ${growth.reason}`, 'InsufficientCapacity');
        await edge(status, target.generation, undefined, growth.reason);
      }
    }
  };

  /**
   * After a failed rollout, makes what runs what Kiln shows and bills: the last good configuration keeps serving
   * (an update or scale that failed is rolled back), or, when nothing ran before, the pods placed so far are removed
   * and give their GPUs back. Answers what it did, for the failure reason.
   */
  const putBackAfterFailure = async (target: DesiredDeployment): Promise<string> => {
    const previous = applied?.running ? applied : undefined;
    const fallback: DesiredDeployment = previous ? lastGood(target, previous) : { ...target, running: false };
    try {
      await applyStack({ deploymentId, organizationId, name, desired: fallback });
      if (previous) return `the last good configuration (${previous.replicas} replica${previous.replicas === 1 ? '' : 's'}) still serves`;
      applied = appliedOf(fallback);
      return 'the replicas it placed were removed, so it holds no GPUs';
    } catch (error) {
      if (isCancellation(error)) throw error;
      return `putting back what ran before failed too: ${failureReason(error)}`;
    }
  };

  /** Whether the autoscaler looks after the deployment now: it runs as asked, with room between its bounds. */
  const autoscales = () => desired.autoscaling !== undefined && desired.running && !desired.deleted && desired.minReplicas < desired.maxReplicas
    && applied?.running === true && (progress.status === 'running' || progress.status === 'scaled_to_zero');
  /** Something to converge on: a new desired state, or the autoscaler's (or a wake's) replica count. */
  const changeWaiting = () => desired.generation > progress.observedGeneration || (applied !== undefined && effective(desired).replicas !== applied.replicas);

  /**
   * The autoscaler's turn: measures the load, and either sets a new replica count (true: converge on it) or
   * sleeps until the next measurement, a new desired state or a wake. Scaled to zero there is nothing to measure.
   */
  const autoscale = async (): Promise<boolean> => {
    const current = applied!.replicas;
    if (current === 0) {
      await condition(changeWaiting);
      return false;
    }
    // Each measurement also looks for replicas lost with a node. patched(): older histories replay without it.
    if (patched('replica-watch') && await recoverLostReplicas()) return false;
    const policy = desired.autoscaling!;
    let intervalMs = AUTOSCALE_INTERVAL_SECONDS * 1000;
    try {
      const load = await measureLoad({ organizationId, name, windowSeconds: policy.scaleToZeroAfterSeconds });
      intervalMs = load.intervalMs;
      const decision = nextReplicas(current, load, policy, desired, memory, Date.now());
      memory = decision.memory;
      if (decision.replicas !== current) {
        autoscaled = decision.replicas;
        scaleReason = decision.reason;
        return true;
      }
    } catch (error) {
      if (isCancellation(error)) throw error;
    }
    await condition(changeWaiting, intervalMs);
    return false;
  };

  /** Whether replicas are watched for lost nodes: the deployment runs some, as asked, with nothing in flight. */
  const watched = () => applied?.running === true && applied.replicas > 0 && progress.status === 'running' && !desired.deleted;

  /**
   * Replicas on a node that was deleted or is no longer Ready are removed and placed again (growing a pool if the
   * cluster lacks the GPUs), the deployment `scaling` meanwhile, then `running` again with a deployment.recovered
   * event naming the nodes. True when it found some.
   */
  const recoverLostReplicas = async (): Promise<boolean> => {
    let lost: Awaited<ReturnType<typeof replaceLostReplicas>>;
    try {
      lost = await replaceLostReplicas({ deploymentId, organizationId, name });
    } catch (error) {
      if (isCancellation(error)) throw error;
      return false; // the cluster did not answer: the next check looks again
    }
    if (!lost.length) return false;
    const target = effective(desired);
    const nodes = [...new Set(lost.map((l) => `${l.node} (${l.why})`))].join(', ');
    const count = `${lost.length} replica${lost.length === 1 ? '' : 's'}`;
    await edge('scaling', target.generation, undefined, `${count} lost with node ${nodes}: placing ${lost.length === 1 ? 'it' : 'them'} again`);
    try {
      await placeReplicas(target, 'scaling');
    } catch (error) {
      if (isCancellation(error)) throw error;
      await edge('failed', target.generation, 'deployment.failed', `${count} lost with node ${nodes} could not be placed again: ${failureReason(error)}`);
      return true;
    }
    recoveries += 1;
    await edge('running', target.generation, 'deployment.recovered', undefined, { reason: `${count} lost with node ${nodes}, placed again` });
    return true;
  };

  /** Between changes: a check for lost replicas every REPLICA_WATCH_MS. Returns at a new desired state or after one check, so the loop can continue as new. */
  const watchReplicas = async (): Promise<void> => {
    if (await condition(() => desired.generation > progress.observedGeneration, REPLICA_WATCH_MS)) return;
    await recoverLostReplicas();
  };

  if (!input.resume) await edge('pending', 0, 'deployment.created');
  for (;;) {
    const target = desired;
    if (target.deleted) {
      await edge('deleting', target.generation);
      try {
        await destroyStack({ deploymentId, organizationId });
        applied = undefined;
        await edge('deleted', target.generation, 'deployment.deleted');
        return progress;
      } catch (error) {
        if (isCancellation(error)) throw error;
        const reason = failureReason(error);
        if (target.forceDelete) {
          await edge('deleted', target.generation, 'deployment.deleted', `force-deleted; the teardown failed and resources may remain: ${reason}`);
          return progress;
        }
        // Wait for recovery: a retry (new generation) or a force-delete.
        await edge('failed', target.generation, 'deployment.failed', `deletion failed: ${reason}`);
      }
    }
    const change = target.deleted ? undefined : describeChange(applied, effective(target));
    if (change) {
      inFlight = new CancellationScope();
      try {
        await inFlight.run(() => converge(effective(target), change));
      } catch (error) {
        // A rollout that ends because the deployment is being deleted has not failed: the loop deletes next.
        if (!desired.deleted) {
          if (isCancellation(error)) throw error; // the workflow itself was cancelled
          const reason = failureReason(error);
          // patched(): histories from before the clean-up replay without it.
          const putBack = patched('failed-rollout-put-back') ? await putBackAfterFailure(target) : undefined;
          await edge('failed', target.generation, 'deployment.failed', putBack ? `${reason}; ${putBack}` : reason);
          // The stack may hold part of the failed change: whatever comes next (a retry, or going back to what
          // ran before) is applied in full. patched(): older histories replay without this.
          if (patched('reapply-after-failure')) applied = undefined;
        }
      } finally {
        inFlight = undefined;
      }
    } else if (!target.deleted && progress.observedGeneration < target.generation) {
      progress = { ...progress, observedGeneration: target.generation };
    }
    // Sleep until the user asks for something new, measuring the load meanwhile when the autoscaler looks
    // after the deployment. patched(): histories from before the autoscaler replay the plain wait.
    if (patched('autoscaler') && autoscales()) {
      if (await autoscale()) continue;
    } else if (watched() && patched('replica-watch')) {
      await watchReplicas();
    } else {
      await condition(() => desired.generation > progress.observedGeneration);
    }
    if (workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof deploymentWorkflow>({ ...input, desired, resume: { applied, progress, refreshed, autoscaled, autoscaler: memory, scales, recoveries } });
    }
  }
}

interface Change { status: DeploymentLifecycleStatus; event?: DeploymentEventType }

function appliedOf(d: DesiredDeployment): AppliedDeployment {
  return {
    model: d.model, gpu: d.gpu, replicas: d.replicas, minReplicas: d.minReplicas, maxReplicas: d.maxReplicas, running: d.running, restarts: d.restarts,
    // Left out when absent, so histories from before these fields replay to the same applied state.
    ...(d.gpusPerReplica === undefined ? {} : { gpusPerReplica: d.gpusPerReplica }),
    ...(d.contextLength === undefined ? {} : { contextLength: d.contextLength }),
    ...(d.dtype === undefined ? {} : { dtype: d.dtype }),
    ...(d.vllmArgs === undefined ? {} : { vllmArgs: d.vllmArgs }),
    ...(d.secrets === undefined ? {} : { secrets: d.secrets }),
  };
}

/** The desired state that puts back what was applied last (its fields absent there are absent here). */
function lastGood(target: DesiredDeployment, previous: AppliedDeployment): DesiredDeployment {
  const { gpusPerReplica: _g, contextLength: _c, dtype: _d, vllmArgs: _v, secrets: _s, ...rest } = target;
  return { ...rest, ...previous };
}

/** Whether the way vLLM serves the model changed (a new pod template: a rolling update). */
function servingChanged(applied: AppliedDeployment, target: DesiredDeployment): boolean {
  return applied.gpusPerReplica !== target.gpusPerReplica || applied.contextLength !== target.contextLength || applied.dtype !== target.dtype
    || (applied.vllmArgs ?? []).join('\u0000') !== (target.vllmArgs ?? []).join('\u0000')
    || JSON.stringify(applied.secrets ?? []) !== JSON.stringify(target.secrets ?? []);
}

/** Which lifecycle edge a desired state means, given what was applied; undefined when nothing changes. */
export function describeChange(applied: AppliedDeployment | undefined, target: DesiredDeployment): Change | undefined {
  if (!applied || applied.running !== target.running) {
    return target.running ? { status: 'deploying', event: 'deployment.running' } : { status: 'stopping', event: 'deployment.stopped' };
  }
  if (!target.running) return undefined;
  const reconfigured = applied.model !== target.model || applied.gpu !== target.gpu || applied.minReplicas !== target.minReplicas
    || applied.maxReplicas !== target.maxReplicas || applied.restarts !== target.restarts || servingChanged(applied, target);
  if (reconfigured) return { status: 'updating' };
  if (applied.replicas !== target.replicas) return { status: 'scaling', event: 'deployment.scaled' };
  return undefined;
}

/** How many replicas waitUntilReady could not place, when that is why it failed. */
function missingReplicasOf(error: unknown): number | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  if (!(cause instanceof ApplicationFailure) || cause.type !== 'InsufficientCapacity') return undefined;
  return (cause.details?.[0] as { missingReplicas?: number } | undefined)?.missingReplicas;
}

function failureReason(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) return cause.message;
  return cause instanceof Error ? cause.message : String(cause);
}

/** The Temporal UI's Current Details of a deployment's workflow (markdown): its status, what it waits for, and what to do if failed. */
function currentDetails(name: string, status: DeploymentLifecycleStatus, generation: number, failureReason: string | undefined): string {
  const head = `**${name}: ${status}** (generation ${generation})`;
  if (status !== 'failed') return failureReason ? `${head}\n\n${failureReason}` : head; // what it waits for (a pool's growth)
  return `${head}\n\n${failureReason ?? 'No reason was recorded.'}\n\nThis workflow stays open to take a retry: POST /v1/recovery/deployments/{id} (retry or refresh_and_retry), or delete the deployment.`;
}
