import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BaseSchema } from '../database/base.entity.ts';
import { GpuClusterSchema } from '../clusters/gpu-cluster.entity.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import type { DeploymentLifecycleStatus, SecretReference } from '../../workflows/contract/deployment.ts';
import type { Dtype } from '../../catalog/deployment-rules.ts';
import type { AutoscalingPolicy } from '../../catalog/autoscaling.ts';

// The workflow reports the statuses this row stores: the contract holds their one list.
export type DeploymentStatus = DeploymentLifecycleStatus;

/**
 * Deployments that hold GPUs (their replicas x GPUs per replica, when not deleted): neither waiting, stopped,
 * failed nor being torn down. The admin revenue's GPU run rate and each cluster's GPUs in use count these.
 */
export const LIVE_STATUSES = ['deploying', 'running', 'scaling', 'updating'] as const satisfies readonly DeploymentStatus[];

export const DeploymentSchema = defineEntity({
  name: 'Deployment',
  extends: BaseSchema,
  // Keyset pagination walks (organization, created_at, id); the unique live name is a partial index
  // written in the migration.
  indexes: [{ properties: ['organization', 'createdAt', 'id'] }],
  properties: {
    organization: () => p.manyToOne(OrganizationSchema).ref(),
    name: p.string(),
    model: p.string(),
    runtime: p.string(),
    gpu: p.string(),
    /** The cluster serving the deployment, chosen from its GPU type at creation; null for deployments older than clusters. */
    cluster: () => p.manyToOne(GpuClusterSchema).ref().nullable(),
    status: p.string().$type<DeploymentStatus>(),
    endpoint: p.string(),
    replicas: p.integer(),
    minReplicas: p.integer(),
    maxReplicas: p.integer(),
    /** Replicas running now, as the workflow last recorded them (the autoscaler's choice; 0 scaled to zero). */
    currentReplicas: p.integer(),
    /** Raised each time the user sets `replicas` (a scale, an update naming it): that count replaces the autoscaler's, even when equal to the last one asked for. */
    replicaRequests: p.integer().default(0),
    /** How the autoscaler moves replicas between the bounds (catalog/autoscaling.ts). */
    autoscaling: p.json<AutoscalingPolicy>(),
    /** vLLM's tensor-parallel size: GPUs each replica holds. */
    gpusPerReplica: p.integer(),
    /** vLLM --max-model-len; null: vLLM takes the model's own (Kiln had no figures to size it). */
    contextLength: p.integer().nullable(),
    dtype: p.string().$type<Dtype>(),
    /** Further vLLM flags, appended as given (catalog/deployment-rules.ts vllmArgsProblem). */
    vllmArgs: p.json<string[]>(),
    /** The organization's secrets it mounts as environment variables (secrets/); null or empty: none. */
    secrets: p.json<SecretReference[]>().nullable(),
    /** The template (tpl_..., or a catalog preset_...) and version it was made from or follows; null otherwise. */
    templateId: p.string().nullable(),
    templateVersion: p.integer().nullable(),
    /** Raised by every change of the desired state; the workflow converges on the highest it has seen. */
    generation: p.integer().default(1),
    /** Highest generation its workflow has received; lower than `generation` while a change waits to be sent. */
    sentGeneration: p.integer().default(0),
    /** false after `stop`, true after `start`. */
    running: p.boolean().default(true),
    /** Raised by `restart`. */
    restarts: p.integer().default(0),
    /** Raised by recovery's refresh-and-retry. */
    refreshes: p.integer().default(0),
    /** Set by DELETE: the workflow tears the deployment down, then sets deletedAt. */
    deleteRequested: p.boolean().default(false),
    /** Set by recovery's force-delete: a failing teardown still ends the deployment. */
    forceDelete: p.boolean().default(false),
    /** Why the last rollout failed, as the workflow reported it; null unless status is `failed`. */
    failureReason: p.text().nullable(),
    updatedAt: p.datetime(3).onCreate(() => new Date()).onUpdate(() => new Date()),
    deletedAt: p.datetime().nullable(),
  },
});

export type Deployment = InferEntity<typeof DeploymentSchema>;
