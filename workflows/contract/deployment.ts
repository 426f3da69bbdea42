// The contract between the control plane and the deployment workflow: names, message definitions and
// argument types. Both sides import this module; nothing else of workflows/ is visible to the API.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { AutoscalerMemory, AutoscalingPolicy } from '../../catalog/autoscaling.ts';

export const DEPLOYMENTS_TASK_QUEUE = 'kiln-deployments';

/**
 * Kubernetes namespace of an organization's deployments (names are unique per organization only): where the
 * worker applies them and where the API's inference gateway finds their pods.
 */
export function namespaceOf(organizationId: string): string {
  return `kiln-${organizationId.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`.slice(0, 63).replace(/-+$/, '');
}
export const DEPLOYMENT_WORKFLOW = 'deploymentWorkflow';

/**
 * What the user asked for, as stored by the API. Every change raises `generation`; the workflow converges
 * on the highest generation it has seen and ignores older or repeated messages, so duplicates are harmless.
 */
export interface DesiredDeployment {
  readonly generation: number;
  readonly model: string;
  readonly gpu: string;
  readonly replicas: number;
  readonly minReplicas: number;
  readonly maxReplicas: number;
  /** How the autoscaler moves replicas between the bounds; absent from desired states sent before Kiln autoscaled (no autoscaling). */
  readonly autoscaling?: AutoscalingPolicy;
  /** Raised each time the user sets `replicas`: the workflow drops the autoscaler's count for the user's. */
  readonly replicaRequests?: number;
  // How vLLM serves the model (absent from desired states sent before Kiln stored them: one GPU, vLLM's defaults).
  /** vLLM's tensor-parallel size: GPUs per replica; 1 when absent. */
  readonly gpusPerReplica?: number;
  /** vLLM --max-model-len; vLLM's own when absent. */
  readonly contextLength?: number;
  /** vLLM --dtype; `auto` when absent. */
  readonly dtype?: string;
  /** Further vLLM flags. */
  readonly vllmArgs?: readonly string[];
  /** The organization's secrets mounted as environment variables (the worker opens them); none when absent. */
  readonly secrets?: readonly SecretReference[];
  /** false after `stop`, true after `start`. */
  readonly running: boolean;
  /** Raised by `restart`: a rolling restart with the same configuration. */
  readonly restarts: number;
  /** Raised by recovery's refresh-and-retry: `pulumi refresh` before the next `pulumi up`. */
  readonly refreshes: number;
  readonly deleted: boolean;
  /** Recovery's force-delete: a deletion whose teardown fails still ends `deleted` (resources may remain). */
  readonly forceDelete: boolean;
}

/** A secret of the organization (`sec_...`) a deployment's containers see as the environment variable `name`. */
export interface SecretReference {
  readonly name: string;
  readonly secretId: string;
}

/** The part of a desired state that has been applied to the deployment's stack. */
export type AppliedDeployment = Omit<DesiredDeployment, 'generation' | 'deleted' | 'forceDelete' | 'refreshes'>;

export interface DeploymentWorkflowInput {
  readonly deploymentId: string;
  readonly organizationId: string;
  readonly name: string;
  readonly desired: DesiredDeployment;
  /** Carried across continue-as-new. */
  readonly resume?: {
    readonly applied?: AppliedDeployment; readonly progress: DeploymentProgress; readonly refreshed?: number;
    /** The autoscaler's replica count, memory and number of scales so far. */
    readonly autoscaled?: number; readonly autoscaler?: AutoscalerMemory; readonly scales?: number;
    /** Recoveries from lost nodes so far (each deployment.recovered is its own event). */
    readonly recoveries?: number;
  };
}

/** What the workflow reports: the lifecycle status (pending -> deploying -> running ..., docs/concepts/lifecycle.md) and the generation it reflects. */
export interface DeploymentProgress {
  readonly status: DeploymentLifecycleStatus;
  readonly observedGeneration: number;
  /** The model server's in-cluster Service URL (not the public endpoint the API shows). */
  readonly serviceUrl?: string;
  readonly failureReason?: string;
}

/** A deployment's lifecycle statuses: what the workflow reports and the API stores and filters by. */
export const DEPLOYMENT_STATUSES = [
  'pending', 'deploying', 'running', 'scaling', 'scaled_to_zero', 'updating', 'stopping', 'stopped', 'failed', 'deleting', 'deleted',
] as const;
export type DeploymentLifecycleStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** The event types a deployment records (and webhooks deliver); a recorded event is the DeploymentEvent entity. */
export type DeploymentEventType = 'deployment.created' | 'deployment.running' | 'deployment.failed' | 'deployment.scaled' | 'deployment.recovered' | 'deployment.stopped' | 'deployment.deleted';

export const desiredStateSignal = defineSignal<[DesiredDeployment]>('desiredState');
export const progressQuery = defineQuery<DeploymentProgress>('progress');
/** A request reached a deployment scaled to zero: run its minimum again (at least one replica). Repeats are harmless. */
export const wakeSignal = defineSignal('wake');

/** What the workflow hands the stack activities: the deployment and the desired state to apply. */
export interface StackTarget {
  readonly deploymentId: string;
  readonly organizationId: string;
  readonly name: string;
  readonly desired: DesiredDeployment;
}

/** The dry run's workflow: a `pulumi preview` of a deployment not created yet, answered to the API that waits on it. */
export const PREVIEW_DEPLOYMENT_WORKFLOW = 'previewDeploymentWorkflow';

export interface DeploymentPreviewInput {
  /** Names the preview's own throwaway stack (and its workflow). */
  readonly previewId: string;
  readonly organizationId: string;
  readonly name: string;
  readonly desired: DesiredDeployment;
  /** The cluster creation would place the deployment on. */
  readonly clusterId: string;
}

/** One Kubernetes object the preview would create (or change), as the Pulumi engine planned it. */
export interface PlannedResource {
  readonly operation: string;
  readonly type: string;
  readonly name: string;
}
