// The control plane's door to Temporal for `aws` and `local` clusters: sends a cluster's desired state to its workflow,
// starting the workflow when it is not running (signal-with-start). The API never waits for Pulumi.
import type { Client } from '@temporalio/client';
import { CLUSTER_WORKFLOW, desiredClusterOf, desiredClusterSignal, type ClusterWorkflowInput } from '../../workflows/contract/cluster.ts';
import { DEPLOYMENTS_TASK_QUEUE } from '../../workflows/contract/deployment.ts';
import type { GpuClusterRecord } from './gpu-cluster.entity.ts';

export function createClusterOrchestrator(client: Client) {
  return {
    async converge(cluster: GpuClusterRecord): Promise<void> {
      const desired = desiredClusterOf(cluster);
      const input: ClusterWorkflowInput = { clusterId: cluster.id, name: cluster.name, desired };
      await client.workflow.signalWithStart(CLUSTER_WORKFLOW, {
        workflowId: cluster.id,
        taskQueue: DEPLOYMENTS_TASK_QUEUE,
        args: [input],
        signal: desiredClusterSignal,
        signalArgs: [desired],
        memo: { name: cluster.name, provider: cluster.provider },
      });
    },
  };
}

export type ClusterOrchestrator = ReturnType<typeof createClusterOrchestrator>;
