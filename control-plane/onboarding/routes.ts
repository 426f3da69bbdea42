// /v1/onboarding: the caller's onboarding progress (dismiss, restart), its steps (skip one), and where the
// organization can run deployments (connect its own Kubernetes cluster). Progress and steps are each user's
// (profile permissions: every role reads and changes its own); the providers are the organization's.
import { z } from 'zod';
import { defineRoute, type Route } from '../http/routes.ts';
import {
  CreateProviderRequest, OnboardingProgressView, OnboardingQuery, OnboardingRequest, OnboardingStepView, ProviderView, SkipStepRequest,
} from './schemas.ts';
import type { OnboardingService } from './service.ts';

const common = { tag: 'Onboarding', resourceType: 'onboarding' } as const;

export function onboardingRoutes(onboarding: OnboardingService): Route[] {
  return [
    defineRoute({
      ...common, permission: 'profile:read', method: 'GET', path: '/v1/onboarding', operationId: 'getOnboarding',
      summary: 'Your onboarding progress in this organization: steps done (read from what happened), skipped, the next one, and whether you dismissed it',
      query: OnboardingQuery, response: OnboardingProgressView,
      handle: async ({ state }) => ({ data: await onboarding.progress(state.em, state.principal!) }),
    }),
    defineRoute({
      ...common, permission: 'profile:write', method: 'POST', path: '/v1/onboarding', operationId: 'updateOnboarding',
      summary: 'Dismiss your onboarding, or restart it (shown again, no step skipped); answers the progress',
      body: OnboardingRequest, response: OnboardingProgressView,
      handle: async ({ body, state }) => ({ data: await onboarding.act(state.em, state.principal!, body.action) }),
    }),
    defineRoute({
      ...common, permission: 'profile:read', method: 'GET', path: '/v1/onboarding/steps', operationId: 'listOnboardingSteps',
      summary: 'Each onboarding step, whether it is done (and when), skipped, and the call that does it',
      query: OnboardingQuery, response: z.array(OnboardingStepView),
      handle: async ({ state }) => ({ data: await onboarding.steps(state.em, state.principal!) }),
    }),
    defineRoute({
      ...common, permission: 'profile:write', method: 'POST', path: '/v1/onboarding/steps', operationId: 'skipOnboardingStep',
      summary: 'Skip (or unskip) a step that is not done; no call marks a step done, only doing it',
      body: SkipStepRequest, response: OnboardingStepView, errors: [422],
      handle: async ({ body, state }) => ({ data: await onboarding.skip(state.em, state.principal!, body) }),
    }),
    defineRoute({
      ...common, resourceType: 'gpu_cluster', permission: 'organization:read', method: 'GET', path: '/v1/onboarding/providers', operationId: 'listOnboardingProviders',
      summary: 'Where the organization can run deployments, in the order they are placed: its own clusters, then the shared ones, each with its state, GPUs and their provisioning circuits',
      query: OnboardingQuery, response: z.array(ProviderView),
      handle: async ({ state }) => ({ data: await onboarding.providers(state.em, state.principal!) }),
    }),
    defineRoute({
      ...common, resourceType: 'gpu_cluster', permission: 'organization:write', method: 'POST', path: '/v1/onboarding/providers', operationId: 'connectOnboardingProvider',
      summary: 'Connect the organization\'s own Kubernetes cluster by kubeconfig: seen and used by the organization alone, and tried before the shared clusters',
      body: CreateProviderRequest, response: ProviderView, successStatus: 201, idempotent: true, errors: [409, 422],
      async handle({ body, state }) {
        const provider = await onboarding.connect(state.em, state.principal!, body);
        state.resourceId = provider.id;
        return { data: provider };
      },
    }),
  ];
}
