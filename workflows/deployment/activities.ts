// The deployment workflow's activities: all of its I/O. Built by a factory from explicit dependencies so each
// can be tested on its own and the worker decides what they talk to.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { CircuitKey } from '../../control-plane/recovery/circuits.ts';
import type { DeploymentEventType, DeploymentLifecycleStatus, DeploymentPreviewInput, SecretReference, StackTarget } from '../contract/deployment.ts';
import { EMPTY_PROGRAM, refuseInvalid, runActivityOperation } from '../pulumi/activity.ts';
import type { PlannedStep, ProgramRef, PulumiSettings } from '../pulumi/automation.ts';
import { AUTOSCALE_INTERVAL_SECONDS, type MeasuredLoad } from '../../catalog/autoscaling.ts';

export interface StatusUpdate {
  readonly deploymentId: string;
  readonly status: DeploymentLifecycleStatus;
  /** The edge's event; the store records it at most once per (deployment, event, generation). */
  readonly event?: DeploymentEventType;
  readonly generation: number;
  readonly failureReason?: string;
  readonly replicas: number;
  /** A `deployment.scaled` edge's replicas before it (the event's `previousReplicas`). */
  readonly previousReplicas?: number;
  /** The autoscaler's scales (or the recoveries) within one generation: each `deployment.scaled` (`deployment.recovered`) is its own event. 0 when absent. */
  readonly sequence?: number;
  /** Why the autoscaler scaled, or what a recovery replaced (the event's `reason`). */
  readonly reason?: string;
  /** When the workflow saw the edge (epoch ms): metering charges the replicas from then, however late the write. Now when absent. */
  readonly at?: number;
}

/** A deployment's load as the autoscaler reads it, and when to read it next. */
export interface LoadReading extends MeasuredLoad {
  readonly intervalMs: number;
}


export interface ClusterAccess {
  /** Kubeconfig (YAML) of the cluster serving the deployment's GPU type. */
  readonly kubeconfig: string;
}

/** How many replicas are Ready, and why the others are not when the cluster cannot place them. */
export interface Readiness {
  readonly readyReplicas: number;
  readonly unschedulableReason?: string;
  /** How many pods the scheduler cannot place (what a pool grows for); the replicas not Ready when absent. */
  readonly unschedulableReplicas?: number;
}

/** A replica whose node was lost, which Kiln removed so its ReplicaSet places it again. */
export interface LostReplica {
  readonly pod: string;
  readonly node: string;
  /** `deleted`: the node is gone from the cluster; `not ready`: its Ready condition is not True. */
  readonly why: 'deleted' | 'not ready';
}

/** The GPU cluster a deployment was placed on at creation. */
export interface ServingCluster extends ClusterAccess {
  readonly clusterId: string;
  readonly provider: string;
}

/** A deployment's replicas that cannot be placed for lack of GPUs, sent to grow a node pool of its cluster. */
export interface PoolGrowthRequest {
  readonly deploymentId: string;
  /** Unique to one ask of the workflow: a retried activity finds the growth it already made. */
  readonly requestId: string;
  readonly gpuType: string;
  readonly missingReplicas: number;
  readonly gpusPerReplica: number;
}

/** `adding`: a pool grows and `reason` says by what ("adding 2 nvidia-l4 nodes to pool l4"); otherwise why none can. */
export interface PoolGrowthResult {
  readonly adding: boolean;
  readonly reason: string;
}

/** The provisioning circuit of each attempt's (cluster provider, GPU type), as control-plane/recovery/circuits.ts keeps them. */
export interface ProvisioningCircuits {
  /** undefined: the attempt may go ahead; otherwise why it may not. */
  acquire(key: CircuitKey): Promise<{ readonly reason: string } | undefined>;
  recordSuccess(key: CircuitKey): Promise<void>;
  recordFailure(key: CircuitKey, reason: string): Promise<void>;
}

export interface DeploymentActivityDeps {
  readonly pulumi: PulumiSettings;
  /**
   * The Pulumi program of one deployment (the vllm-deployment component on the cluster serving it), named
   * by module and export: it runs in a process of its own.
   */
  readonly programFor: (target: StackTarget, cluster: ClusterAccess, secretEnv?: Readonly<Record<string, string>>) => ProgramRef;
  /**
   * Opens the organization's secrets a deployment mounts (variable name -> value) and records their use; none
   * when absent. The values go to the program alone: never to Temporal, a log or an error.
   */
  readonly secrets?: { open(organizationId: string, references: readonly SecretReference[]): Promise<Record<string, string>> };
  /** Checks a target against the stack's rules before Pulumi runs; what it throws is not worth a retry. */
  readonly check?: (target: StackTarget) => void;
  /** The cluster serving a deployment, or a cluster by id (a dry run's, before any deployment exists), with its kubeconfig. */
  readonly clusters: { accessFor(deploymentId: string): Promise<ServingCluster>; accessToCluster(clusterId: string): Promise<ServingCluster> };
  /**
   * Makes the organization's namespace on a cluster when it is missing. Every deployment of the organization
   * shares it, so no one deployment's stack may own it (a second stack's create would fail, a destroy would
   * take the others' objects with it).
   */
  readonly namespaces: { ensure(cluster: ClusterAccess, organizationId: string): Promise<void> };
  readonly circuits: ProvisioningCircuits;
  readonly statuses: { record(update: StatusUpdate): Promise<void> };
  readonly readiness: {
    probe(target: { organizationId: string; name: string }, cluster: ClusterAccess): Promise<Readiness>;
    replaceLost(target: { organizationId: string; name: string }, cluster: ClusterAccess): Promise<LostReplica[]>;
  };
  /** Reads a deployment's load (requests in flight, requests finished within `windowSeconds`) from its model servers' metrics. */
  readonly load: { measure(target: { organizationId: string; name: string; windowSeconds: number }): Promise<MeasuredLoad> };
  /** How often the autoscaler measures a deployment's load (AUTOSCALE_INTERVAL_SECONDS when absent). */
  readonly autoscaleIntervalMs?: number;
  /**
   * How long pods may stay unschedulable before waitUntilReady gives up (the cluster lacks GPUs); time while the
   * cluster is scaling does not count.
   */
  readonly unschedulableGraceMs?: number;
  /** The node pools of the deployments' clusters (workflows/cluster/pool-growth.ts); none grow when absent. */
  readonly pools?: {
    grow(request: PoolGrowthRequest): Promise<PoolGrowthResult>;
    scaling(clusterId: string): Promise<boolean>;
  };
  readonly pollIntervalMs?: number;
}

export const DEPLOYMENT_PROJECT = 'kiln-deployment';

export function createDeploymentActivities(deps: DeploymentActivityDeps) {
  const pollMs = deps.pollIntervalMs ?? 1000;
  const graceMs = deps.unschedulableGraceMs ?? 60_000;

  return {
    async recordStatus(update: StatusUpdate): Promise<void> {
      await deps.statuses.record(update);
    },

    /** The autoscaler's reading of a deployment's load; the worker sets how often it is taken. */
    async measureLoad(target: { organizationId: string; name: string; windowSeconds: number }): Promise<LoadReading> {
      return { ...await deps.load.measure(target), intervalMs: deps.autoscaleIntervalMs ?? AUTOSCALE_INTERVAL_SECONDS * 1000 };
    },

    /**
     * `pulumi up` of the deployment's stack on its cluster; answers with the model server's in-cluster Service URL and
     * the drift it put back (fields of Kiln's objects changed out of band, a line each). A rollout that places pods
     * is a provisioning attempt: its circuit must let it through, and its outcome is recorded.
     */
    async applyStack(target: StackTarget): Promise<{ serviceUrl: string; drift: string[] }> {
      refuseInvalid(() => deps.check?.(target), 'InvalidDeployment');
      const cluster = await deps.clusters.accessFor(target.deploymentId);
      const circuit = target.desired.running ? { provider: cluster.provider, gpuType: target.desired.gpu } : undefined;
      const refused = circuit && await deps.circuits.acquire(circuit);
      if (refused) throw ApplicationFailure.nonRetryable(refused.reason, 'CircuitOpen');
      if (target.desired.running) await deps.namespaces.ensure(cluster, target.organizationId);
      const references = target.desired.running ? target.desired.secrets ?? [] : [];
      const secretEnv = references.length && deps.secrets ? await deps.secrets.open(target.organizationId, references) : {};
      const { outputs, drift } = await runActivityOperation(deps.pulumi, {
        project: DEPLOYMENT_PROJECT,
        stackName: target.deploymentId,
        ...deps.programFor(target, cluster, secretEnv),
      }, 'up').catch(async (error: unknown) => {
        if (circuit && !(error instanceof CancelledFailure)) await deps.circuits.recordFailure(circuit, (error as Error).message);
        throw error;
      });
      if (circuit) await deps.circuits.recordSuccess(circuit);
      const serviceUrl = outputs.serviceUrl?.value;
      if (typeof serviceUrl !== 'string') throw ApplicationFailure.nonRetryable('the deployment stack did not output a serviceUrl', 'StackOutputMissing');
      return { serviceUrl, drift };
    },

    /**
     * `pulumi preview` of a deployment not created yet (the dry run): its program on the cluster it would be
     * placed on, in a stack of its own that is removed afterwards; answers the resource steps the engine plans.
     */
    async previewStack(input: DeploymentPreviewInput): Promise<PlannedStep[]> {
      const target: StackTarget = { deploymentId: input.previewId, organizationId: input.organizationId, name: input.name, desired: input.desired };
      refuseInvalid(() => deps.check?.(target), 'InvalidDeployment');
      const cluster = await deps.clusters.accessToCluster(input.clusterId);
      const steps: PlannedStep[] = [];
      await runActivityOperation(deps.pulumi, {
        project: DEPLOYMENT_PROJECT, stackName: input.previewId, ephemeral: true, ...deps.programFor(target, cluster),
      }, 'preview', (step) => steps.push(step));
      return steps;
    },

    /** `pulumi refresh`: reads what really exists into the stack's state (recovery's refresh-and-retry); answers the drift it found. */
    async refreshStack(target: StackTarget): Promise<{ drift: string[] }> {
      const cluster = await deps.clusters.accessFor(target.deploymentId);
      const { drift } = await runActivityOperation(deps.pulumi, { project: DEPLOYMENT_PROJECT, stackName: target.deploymentId, ...deps.programFor(target, cluster) }, 'refresh');
      return { drift };
    },

    /** `pulumi destroy` and removal of the deployment's stack. */
    async destroyStack(target: { deploymentId: string; organizationId: string }): Promise<void> {
      await runActivityOperation(deps.pulumi, { project: DEPLOYMENT_PROJECT, stackName: target.deploymentId, ...EMPTY_PROGRAM }, 'destroy');
    },

    /** Grows a node pool of the deployment's cluster by what its missing replicas need, or says why none can grow. */
    async growNodePool(request: PoolGrowthRequest): Promise<PoolGrowthResult> {
      return deps.pools?.grow(request) ?? { adding: false, reason: 'no node pool can grow' };
    },

    /**
     * Polls until every replica is Ready, heartbeating; fails for good when pods cannot be placed (an
     * `InsufficientCapacity` failure whose details are `[{ missingReplicas }]`).
     */
    /** The running deployment's replicas on lost nodes, removed so they are placed again (readiness.ts replaceLost). */
    async replaceLostReplicas(target: { deploymentId: string; organizationId: string; name: string }): Promise<LostReplica[]> {
      return deps.readiness.replaceLost(target, await deps.clusters.accessFor(target.deploymentId));
    },

    async waitUntilReady(target: { deploymentId: string; organizationId: string; name: string; replicas: number }): Promise<void> {
      const context = Context.current();
      const cluster = await deps.clusters.accessFor(target.deploymentId);
      let unschedulableSince: number | undefined;
      for (;;) {
        const readiness = await deps.readiness.probe(target, cluster);
        context.heartbeat(readiness);
        if (readiness.readyReplicas >= target.replicas) return;
        if (readiness.unschedulableReason) {
          unschedulableSince ??= Date.now();
          if (Date.now() - unschedulableSince >= graceMs) {
            // Nodes a growing pool is adding are not there yet: the grace starts again.
            if (await deps.pools?.scaling(cluster.clusterId)) {
              unschedulableSince = Date.now();
            } else {
              const missingReplicas = readiness.unschedulableReplicas ?? target.replicas - readiness.readyReplicas;
              throw ApplicationFailure.nonRetryable(
                `${missingReplicas} of ${target.replicas} replicas cannot be placed: ${readiness.unschedulableReason}`,
                'InsufficientCapacity', { missingReplicas },
              );
            }
          }
        } else {
          unschedulableSince = undefined;
        }
        await context.sleep(pollMs); // rejects when the activity is cancelled
      }
    },
  };
}

export type DeploymentActivities = ReturnType<typeof createDeploymentActivities>;
