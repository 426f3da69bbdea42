// One pass of optimization auto-apply, for every deployment whose policy has autoApply on: measure its load over
// the last hour (lib/prometheus/optimization-load.ts, as GET /v1/deployments/{id}/optimization does), draw the
// recommendations (catalog/optimization-rules.ts), and apply the first auto-apply takes (a cost-saving capacity
// cut within the policy's targets), at most one change per deployment per hour.
import { autoApplicable, recommend } from '../../catalog/optimization-rules.ts';
import type { PrometheusClient } from '../../lib/prometheus/client.ts';
import { measureOptimizationLoad } from '../../lib/prometheus/optimization-load.ts';
import type { OptimizationPassResult } from '../contract/optimization.ts';
import type { OptimizationStore } from './store.ts';

export interface OptimizationActivityDeps {
  readonly store: OptimizationStore;
  readonly prometheus: PrometheusClient;
  readonly namespaceOf: (organizationId: string) => string;
  readonly now?: () => Date;
}

export function createOptimizationActivities(deps: OptimizationActivityDeps) {
  const now = deps.now ?? (() => new Date());
  return {
    async autoApplyRecommendations(): Promise<OptimizationPassResult> {
      const started = Date.now();
      const at = now();
      const candidates = await deps.store.candidates(at);
      let applied = 0;
      for (const candidate of candidates) {
        const load = await measureOptimizationLoad(deps.prometheus, deps.namespaceOf(candidate.organizationId), candidate.name, at);
        // The kinds auto-apply takes rest on the load and the replicas alone: neither the model's figures nor
        // other GPU types (what larger-gpu and cheaper-gpu weigh) are needed.
        const recommendations = recommend({ deployment: candidate.deployment, load, targets: candidate.targets, facts: undefined, alternatives: [] });
        const chosen = autoApplicable(recommendations, load, candidate.targets);
        if (chosen && await deps.store.apply(candidate, chosen, at)) applied += 1;
      }
      return { candidates: candidates.length, applied, passMs: Date.now() - started };
    },
  };
}

export type OptimizationActivities = ReturnType<typeof createOptimizationActivities>;
