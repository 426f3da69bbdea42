// Onboarding: progress and steps computed from the organization's records, and the organization's own clusters.
import { defineModule } from '../module.ts';
import { onboardingRoutes } from './routes.ts';
import { createOnboardingService, type OnboardingService } from './service.ts';

declare module '../module.ts' {
  interface Services { onboarding: OnboardingService }
}

export const onboardingModule = defineModule({
  name: 'onboarding',
  services: ({ config, services }) => ({
    onboarding: createOnboardingService({ clusters: services.clusters, circuits: services.circuits, allowPrivateClusters: config.env !== 'production' }),
  }),
  routes: ({ services }) => onboardingRoutes(services.onboarding),
});
