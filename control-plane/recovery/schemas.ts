import { z } from 'zod';
import { GPU_TYPE_IDS } from '../../catalog/gpu-types.ts';
import { CLUSTER_PROVIDERS } from '../clusters/gpu-cluster.entity.ts';
import { orgIdQuery } from '../core/organization-query.ts';
import { DEPLOYMENT_STATUSES } from '../../workflows/contract/deployment.ts';

export const RECOVERY_ACTIONS = ['retry', 'refresh_and_retry', 'force_delete'] as const;
export type RecoveryAction = (typeof RECOVERY_ACTIONS)[number];

export const RecoveryActionRequest = z.strictObject({
  action: z.enum(RECOVERY_ACTIONS).meta({
    description: 'retry: roll out again; refresh_and_retry: `pulumi refresh` first; force_delete: delete, and end the deployment even if its teardown fails.',
  }),
}).meta({ id: 'RecoveryActionRequest' });

export const BulkRetryRequest = z.strictObject({
  action: z.enum(['retry', 'refresh_and_retry']),
  /** Failed deployments to retry; all the organization's failed deployments when absent. */
  ids: z.array(z.string().max(64)).min(1).max(100).optional(),
}).meta({ id: 'BulkRetryRequest' });

export const RecoveryIdParams = z.object({ id: z.string().max(64) });
export const RecoveryOverviewQuery = z.object(orgIdQuery);

export const DeploymentRecovery = z.object({
  id: z.string(),
  name: z.string(),
  status: z.enum(DEPLOYMENT_STATUSES),
  failureReason: z.string().nullable(),
  generation: z.number().int(),
  events: z.array(z.object({ type: z.string(), generation: z.number().int(), createdAt: z.iso.datetime() })),
  workflow: z.object({
    status: z.string(),
    pendingActivities: z.array(z.object({ activity: z.string(), attempt: z.number().int(), lastFailure: z.string().nullable() })),
  }).nullable().meta({ description: 'What Temporal knows of the deployment\'s workflow; null when it has none.' }),
}).meta({ id: 'DeploymentRecovery' });

export const RecoveryOverview = z.object({
  failed: z.array(z.object({ id: z.string(), name: z.string(), failureReason: z.string().nullable(), updatedAt: z.iso.datetime() })),
}).meta({ id: 'RecoveryOverview' });

export const BulkRetryResult = z.object({
  results: z.array(z.object({ id: z.string(), outcome: z.enum(['retried', 'not_failed', 'not_found']) })),
}).meta({ id: 'BulkRetryResult' });

export const CircuitQuery = z.object(orgIdQuery);

export const CircuitActionRequest = z.strictObject({
  provider: z.enum(CLUSTER_PROVIDERS),
  gpuType: z.enum(GPU_TYPE_IDS),
  action: z.enum(['reset']).meta({ description: 'reset: close the circuit and forget its failures.' }),
}).meta({ id: 'CircuitActionRequest' });

export const CircuitView = z.object({
  provider: z.string(),
  gpuType: z.string(),
  state: z.enum(['closed', 'open', 'half_open']),
  failures: z.number().int().meta({ description: 'Consecutive failed provisioning attempts.' }),
  lastFailure: z.string().nullable().meta({ description: "The last failed attempt's error: platform administrators only (it may be another organization's); null for everyone else." }),
  openedAt: z.iso.datetime().nullable(),
  halfOpensAt: z.iso.datetime().nullable().meta({ description: 'When an open circuit lets one trial attempt through.' }),
  trialStartedAt: z.iso.datetime().nullable(),
  updatedAt: z.iso.datetime(),
}).meta({ id: 'Circuit' });
