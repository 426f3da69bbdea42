// A deployment as both surfaces show it: its row's configuration and status, with the reference surface's state label.
import type { Deployment, DeploymentStatus } from './deployment.entity.ts';
import type { DeploymentViewBody } from './schemas.ts';

const STATE_LABELS: Record<DeploymentStatus, DeploymentViewBody['state']> = {
  pending: 'PENDING', deploying: 'PENDING', running: 'HEALTHY', scaling: 'SCALING', scaled_to_zero: 'IDLE', updating: 'SCALING',
  stopping: 'STOPPED', stopped: 'STOPPED', failed: 'FAILED', deleting: 'DELETING', deleted: 'DELETED',
};

/** What the view reads: an entity, or a row of the list's query. */
export type DeploymentFields = Pick<Deployment, 'id' | 'name' | 'model' | 'runtime' | 'gpu' | 'status' | 'endpoint' | 'replicas' | 'currentReplicas'
  | 'minReplicas' | 'maxReplicas' | 'autoscaling' | 'gpusPerReplica' | 'contextLength' | 'dtype' | 'vllmArgs' | 'failureReason' | 'templateId' | 'templateVersion' | 'createdAt' | 'updatedAt'>;

export function deploymentView(d: DeploymentFields): DeploymentViewBody {
  return {
    id: d.id, name: d.name, model: d.model, runtime: d.runtime, gpu: d.gpu, gpuType: d.gpu,
    status: d.status, state: STATE_LABELS[d.status], endpoint: d.endpoint,
    replicas: d.replicas, currentReplicas: d.currentReplicas, minReplicas: d.minReplicas, maxReplicas: d.maxReplicas, autoscaling: d.autoscaling,
    gpusPerReplica: d.gpusPerReplica, contextLength: d.contextLength ?? null, dtype: d.dtype, vllmArgs: d.vllmArgs,
    failureReason: d.failureReason ?? null, templateId: d.templateId ?? null, templateVersion: d.templateVersion ?? null,
    createdAt: d.createdAt.toISOString(), updatedAt: d.updatedAt.toISOString(),
  };
}
