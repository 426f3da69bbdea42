// Feature flags: set by platform administrators, read by services that branch on one.
import { defineModule } from '../module.ts';
import { createFeatureFlags, type FeatureFlags } from './flags.ts';
import { createFeatureFlagService, type FeatureFlagService } from './service.ts';

declare module '../module.ts' {
  interface Services { featureFlags: FeatureFlags; featureFlagAdmin: FeatureFlagService }
}

export const featureFlagsModule = defineModule({
  name: 'feature-flags',
  services: () => {
    // The one reader of feature flags (flags.ts): services that branch on a flag take it as a dependency.
    const featureFlags = createFeatureFlags();
    return { featureFlags, featureFlagAdmin: createFeatureFlagService({ flags: featureFlags }) };
  },
});
