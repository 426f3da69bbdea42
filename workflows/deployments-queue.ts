// The workflows of the kiln-deployments task queue, bundled together for its worker: one per deployment
// and one per `aws` GPU cluster.
export { deploymentWorkflow } from './deployment/workflow.ts';
export { clusterWorkflow } from './cluster/workflow.ts';
