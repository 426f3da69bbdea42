// The control plane's door to Temporal for `aws` and `local` clusters: sends a cluster's desired state to its workflow,
// starting the workflow when it is not running (signal-with-start). The API never waits for Pulumi, nor long for
// Temporal (core/workflow-calls.ts): a change it could not send stays saved, and clusters/delivery.ts sends it later.
import type { Client } from '@temporalio/client';
import { CLUSTER_WORKFLOW, desiredClusterOf, desiredClusterSignal, type ClusterWorkflowInput } from '../../workflows/contract/cluster.ts';
import { DEPLOYMENTS_TASK_QUEUE } from '../../workflows/contract/deployment.ts';
import { workflowCalls, type WorkflowCallOptions } from '../core/workflow-calls.ts';
import type { GpuClusterRecord } from './gpu-cluster.entity.ts';

export function createClusterOrchestrator(client: Client, options: WorkflowCallOptions = {}) {
  const call = workflowCalls(client, options);
  return {
    /** `deadlineMs`: a request's (core/workflow-calls.ts) when absent; the redelivery loop's is longer. */
    async converge(cluster: GpuClusterRecord, deadlineMs?: number): Promise<void> {
      const desired = desiredClusterOf(cluster);
      const input: ClusterWorkflowInput = { clusterId: cluster.id, name: cluster.name, desired };
      await call((temporal) => temporal.workflow.signalWithStart(CLUSTER_WORKFLOW, {
        workflowId: cluster.id,
        taskQueue: DEPLOYMENTS_TASK_QUEUE,
        args: [input],
        signal: desiredClusterSignal,
        signalArgs: [desired],
        memo: { name: cluster.name, provider: cluster.provider },
      }), deadlineMs);
    },
  };
}

export type ClusterOrchestrator = ReturnType<typeof createClusterOrchestrator>;
