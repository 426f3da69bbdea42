// /v1/onboarding: progress, steps and where the organization can run deployments.
import { z } from 'zod';
import { GPU_TYPE_IDS } from '../../catalog/gpu-types.ts';
import { CLUSTER_STATUSES } from '../../workflows/contract/cluster.ts';
import { clusterGatewayUrl, clusterKubeconfig, clusterName } from '../clusters/schemas.ts';
import { CLUSTER_PROVIDERS } from '../clusters/gpu-cluster.entity.ts';
import { orgIdQuery } from '../core/organization-query.ts';
import { ONBOARDING_STEPS } from './steps.ts';

export const OnboardingQuery = z.object(orgIdQuery);

const step = z.enum(ONBOARDING_STEPS).meta({ example: 'set_budget' });

export const OnboardingRequest = z.strictObject({
  action: z.enum(['dismiss', 'restart']).meta({ description: 'dismiss: hide onboarding for you in this organization; restart: show it again with no step skipped.' }),
}).meta({ id: 'OnboardingRequest' });

export const OnboardingProgressView = z.object({
  total: z.number().int().meta({ example: 7 }),
  done: z.number().int().meta({ description: 'Steps done, as the organization\'s records show.' }),
  skipped: z.number().int().meta({ description: 'Steps you skipped that are not done.' }),
  percent: z.number().int().min(0).max(100).meta({ description: '(done + skipped) / total, rounded down.' }),
  complete: z.boolean().meta({ description: 'Every step done or skipped.' }),
  nextStep: step.nullable().meta({ description: 'The first step neither done nor skipped; null when complete.' }),
  dismissed: z.boolean(),
  dismissedAt: z.iso.datetime().nullable(),
}).meta({ id: 'OnboardingProgress' });

export const SkipStepRequest = z.strictObject({
  step,
  action: z.enum(['skip', 'unskip']).default('skip').meta({ description: 'skip (the default) or unskip; a step is done only by doing it.' }),
}).meta({ id: 'SkipOnboardingStepRequest' });

export const OnboardingStepView = z.object({
  id: step,
  title: z.string(),
  description: z.string(),
  action: z.string().meta({ description: 'The call that does it.', example: 'POST /v1/cost-controls/alerts' }),
  status: z.enum(['done', 'skipped', 'todo']),
  done: z.boolean(),
  doneAt: z.iso.datetime().nullable().meta({ description: 'When the record that did it was made.' }),
  skipped: z.boolean().meta({ description: 'You skipped it (and it is not done).' }),
}).meta({ id: 'OnboardingStep' });

export const CreateProviderRequest = z.strictObject({
  type: z.literal('kubernetes').meta({ description: 'An existing Kubernetes cluster of the organization, reached by kubeconfig.' }),
  name: clusterName,
  kubeconfig: clusterKubeconfig,
  gatewayUrl: clusterGatewayUrl.optional(),
}).meta({ id: 'CreateProviderRequest' });

export const ProviderView = z.object({
  id: z.string().meta({ example: 'clu_0123456789abcdefghij' }),
  name: z.string(),
  kind: z.enum(['own', 'shared']).meta({ description: 'own: the organization\'s cluster, seen and used by it alone; shared: Kiln\'s, used by every organization.' }),
  provider: z.enum(CLUSTER_PROVIDERS),
  status: z.enum(CLUSTER_STATUSES),
  usable: z.boolean().meta({ description: 'New deployments can be placed on it now.' }),
  gpus: z.array(z.object({
    gpuType: z.enum(GPU_TYPE_IDS),
    count: z.number().int(),
    circuit: z.enum(['closed', 'open', 'half_open']).meta({ description: 'The provisioning circuit of its provider and this GPU type: open refuses new deployments for a while.' }),
  })),
  failureReason: z.string().nullable().meta({ description: 'Own clusters only.' }),
  createdAt: z.iso.datetime().meta({ description: 'Own clusters: when connected; shared: when Kiln added it.' }),
}).meta({ id: 'OnboardingProvider' });

export type OnboardingProgressBody = z.infer<typeof OnboardingProgressView>;
export type OnboardingStepBody = z.infer<typeof OnboardingStepView>;
export type SkipStepInput = z.output<typeof SkipStepRequest>;
export type CreateProviderInput = z.output<typeof CreateProviderRequest>;
export type ProviderBody = z.infer<typeof ProviderView>;
