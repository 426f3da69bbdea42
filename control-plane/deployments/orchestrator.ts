// The control plane's only door to Temporal for deployments: send a deployment's desired state to its
// workflow, starting the workflow if it is not running yet (signal-with-start), so a create, an update and
// a retry after a lost message are one idempotent operation. The API never waits for provisioning.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  DEPLOYMENT_WORKFLOW, DEPLOYMENTS_TASK_QUEUE, desiredStateSignal, type DeploymentWorkflowInput, type DesiredDeployment,
} from '../../workflows/contract/deployment.ts';
import { KilnGpuType, KilnOrganizationId, KilnStatus } from '../../workflows/contract/search-attributes.ts';
import { ServiceUnavailableError } from '../core/errors.ts';
import type { Deployment } from './deployment.entity.ts';

const SEND_DEADLINE_MS = 3_000;

export function createDeploymentOrchestrator(client: Client) {
  return {
    async converge(deployment: Deployment): Promise<void> {
      const desired: DesiredDeployment = {
        generation: deployment.generation,
        model: deployment.model,
        gpu: deployment.gpu,
        replicas: deployment.replicas,
        minReplicas: deployment.minReplicas,
        maxReplicas: deployment.maxReplicas,
        gpusPerReplica: deployment.gpusPerReplica,
        ...(deployment.contextLength === null || deployment.contextLength === undefined ? {} : { contextLength: deployment.contextLength }),
        dtype: deployment.dtype,
        vllmArgs: deployment.vllmArgs,
        running: deployment.running,
        restarts: deployment.restarts,
        refreshes: deployment.refreshes,
        deleted: deployment.deleteRequested,
        forceDelete: deployment.forceDelete,
      };
      const input: DeploymentWorkflowInput = { deploymentId: deployment.id, organizationId: deployment.organization.id, name: deployment.name, desired };
      // A request never waits long on Temporal: past the deadline the change stays saved for redelivery.
      await client.withDeadline(Date.now() + SEND_DEADLINE_MS, () => client.workflow.signalWithStart(DEPLOYMENT_WORKFLOW, {
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
      }));
    },

    /**
     * What Temporal knows of a deployment's workflow: its state and the activities it is retrying; null when
     * there is no workflow. Temporal unreachable or slow past the deadline is a 503.
     */
    async inspect(deploymentId: string): Promise<WorkflowInspection | null> {
      try {
        const description = await client.withDeadline(Date.now() + SEND_DEADLINE_MS, () => client.workflow.getHandle(deploymentId).describe());
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
        throw new ServiceUnavailableError('The workflow service is unavailable: try again shortly', {}, { 'Retry-After': '5' });
      }
    },
  };
}

export interface WorkflowInspection {
  readonly status: string;
  readonly pendingActivities: readonly { activity: string; attempt: number; lastFailure: string | null }[];
}

export type DeploymentOrchestrator = ReturnType<typeof createDeploymentOrchestrator>;
