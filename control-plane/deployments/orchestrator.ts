// The control plane's only door to Temporal for deployments: send a deployment's desired state to its
// workflow, starting the workflow if it is not running yet (signal-with-start), so a create, an update and
// a retry after a lost message are one idempotent operation. The API never waits for provisioning; it waits
// only for a dry run's `pulumi preview`, which the worker runs and answers.
import { WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  DEPLOYMENT_WORKFLOW, DEPLOYMENTS_TASK_QUEUE, desiredStateSignal, PREVIEW_DEPLOYMENT_WORKFLOW, wakeSignal, type DeploymentPreviewInput,
  type DeploymentWorkflowInput, type DesiredDeployment, type PlannedResource,
} from '../../workflows/contract/deployment.ts';
import { KilnGpuType, KilnOrganizationId, KilnStatus } from '../../workflows/contract/search-attributes.ts';
import { HELD_REQUEST_DEADLINE_MS, workflowCalls, WorkflowServiceUnavailableError, type WorkflowCallOptions } from '../core/workflow-calls.ts';
import type { Deployment } from './deployment.entity.ts';

type DesiredFields = Pick<Deployment, 'generation' | 'model' | 'gpu' | 'replicas' | 'minReplicas' | 'maxReplicas' | 'autoscaling' | 'replicaRequests' | 'gpusPerReplica' | 'contextLength'
  | 'dtype' | 'vllmArgs' | 'running' | 'restarts' | 'refreshes' | 'deleteRequested' | 'forceDelete'> & Partial<Pick<Deployment, 'secrets'>>;

/** The desired state a deployment row (or a dry run's would-be row) stands for, as its workflow receives it. */
export function desiredOf(d: DesiredFields): DesiredDeployment {
  return {
    generation: d.generation, model: d.model, gpu: d.gpu, replicas: d.replicas, minReplicas: d.minReplicas, maxReplicas: d.maxReplicas, autoscaling: d.autoscaling, replicaRequests: d.replicaRequests,
    gpusPerReplica: d.gpusPerReplica, ...(d.contextLength === null || d.contextLength === undefined ? {} : { contextLength: d.contextLength }),
    dtype: d.dtype, vllmArgs: d.vllmArgs, ...(d.secrets?.length ? { secrets: d.secrets } : {}),
    running: d.running, restarts: d.restarts, refreshes: d.refreshes, deleted: d.deleteRequested, forceDelete: d.forceDelete,
  };
}

export interface DeploymentOrchestratorOptions extends WorkflowCallOptions {
  /** How long a dry run waits for its preview before Temporal ends the preview's workflow; 2 minutes when absent. */
  readonly previewTimeoutMs?: number;
}

/** A preview's answer: the objects the engine would create, or why there is no plan. */
export type PreviewOutcome = { readonly resources: PlannedResource[] } | { readonly failure: string };

export function createDeploymentOrchestrator(client: Client, options: DeploymentOrchestratorOptions = {}) {
  const previewTimeoutMs = options.previewTimeoutMs ?? 120_000;
  const call = workflowCalls(client, options);
  return {
    /** `deadlineMs`: a request's (core/workflow-calls.ts) when absent; the redelivery loop's is longer. */
    async converge(deployment: Deployment, deadlineMs?: number): Promise<void> {
      const desired = desiredOf(deployment);
      const input: DeploymentWorkflowInput = { deploymentId: deployment.id, organizationId: deployment.organization.id, name: deployment.name, desired };
      // A request never waits long on Temporal: refused or past the deadline, the change stays saved for redelivery.
      await call((temporal) => temporal.workflow.signalWithStart(DEPLOYMENT_WORKFLOW, {
        workflowId: deployment.id,
        taskQueue: DEPLOYMENTS_TASK_QUEUE,
        args: [input],
        signal: desiredStateSignal,
        signalArgs: [desired],
        memo: { name: deployment.name, model: deployment.model },
        typedSearchAttributes: [
          { key: KilnOrganizationId, value: deployment.organization.id },
          { key: KilnStatus, value: deployment.status },
          { key: KilnGpuType, value: deployment.gpu },
        ],
      }), deadlineMs);
    },

    /** Asks a deployment scaled to zero to run a replica again (the inference gateway holds the request meanwhile); a 503 when Temporal is away. */
    async wake(deploymentId: string): Promise<void> {
      try {
        await call((temporal) => temporal.workflow.getHandle(deploymentId).signal(wakeSignal), HELD_REQUEST_DEADLINE_MS);
      } catch {
        throw new WorkflowServiceUnavailableError('The workflow service is unavailable: the deployment cannot be woken now');
      }
    },

    /**
     * `pulumi preview` of a deployment not created yet, run by a worker: waits for its answer. A preview that
     * fails, or that no worker takes up in time, is a failure with the reason; Temporal unreachable is a 503.
     */
    async preview(input: DeploymentPreviewInput): Promise<PreviewOutcome> {
      let handle;
      try {
        handle = await call((temporal) => temporal.workflow.start(PREVIEW_DEPLOYMENT_WORKFLOW, {
          workflowId: input.previewId, taskQueue: DEPLOYMENTS_TASK_QUEUE, args: [input], workflowExecutionTimeout: previewTimeoutMs,
          typedSearchAttributes: [{ key: KilnOrganizationId, value: input.organizationId }, { key: KilnGpuType, value: input.desired.gpu }],
        }), HELD_REQUEST_DEADLINE_MS);
      } catch {
        throw new WorkflowServiceUnavailableError();
      }
      try {
        return { resources: await handle.result() as PlannedResource[] };
      } catch (error) {
        if (!(error instanceof WorkflowFailedError)) throw error;
        // An activity's failure arrives wrapped: its own cause names what Pulumi said.
        const failure = error.cause as (Error & { cause?: Error }) | undefined;
        if (failure?.name === 'TimeoutFailure') return { failure: `no worker answered the preview within ${previewTimeoutMs / 1000} s` };
        return { failure: failure?.cause?.message ?? failure?.message ?? error.message };
      }
    },

    /**
     * What Temporal knows of a deployment's workflow: its state and the activities it is retrying; null when
     * there is no workflow. Temporal unreachable or slow past the deadline is a 503.
     */
    async inspect(deploymentId: string): Promise<WorkflowInspection | null> {
      try {
        const description = await call((temporal) => temporal.workflow.getHandle(deploymentId).describe());
        return {
          status: description.status.name,
          pendingActivities: (description.raw.pendingActivities ?? []).map((a) => ({
            activity: a.activityType?.name ?? 'unknown',
            attempt: a.attempt ?? 1,
            lastFailure: a.lastFailure?.message ?? null,
          })),
        };
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return null;
        throw new WorkflowServiceUnavailableError();
      }
    },
  };
}

export interface WorkflowInspection {
  readonly status: string;
  readonly pendingActivities: readonly { activity: string; attempt: number; lastFailure: string | null }[];
}

export type DeploymentOrchestrator = ReturnType<typeof createDeploymentOrchestrator>;
