// The dry run's workflow: one `pulumi preview` of a deployment that does not exist yet, on the worker that
// runs Pulumi (the API never does), answered to the API, which waits for it. Deterministic: no I/O here.
import { proxyActivities } from '@temporalio/workflow';
import type { DeploymentPreviewInput, PlannedResource } from '../contract/deployment.ts';
import type { DeploymentActivities } from './activities.ts';

const { previewStack } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '1 minute',
  // A preview changes nothing, so a second try is harmless; more would only keep the caller waiting.
  retry: { initialInterval: '1 second', maximumAttempts: 2 },
});

export async function previewDeploymentWorkflow(input: DeploymentPreviewInput): Promise<PlannedResource[]> {
  return previewStack(input);
}
