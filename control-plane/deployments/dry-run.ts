// The dry run of a creation (POST /v1/deployments/validate): every check creation makes, each reported with its
// reason instead of stopping at the first; how many replicas fit now, and whether the rest fit once the rollout
// grows a node pool of the cluster (the rule the rollout's growth follows, catalog/node-pools.ts, with what the
// added nodes cost), or why they never do; then, if all pass (and a preview is asked for), the plan of `pulumi
// preview` on the cluster creation would choose, and what the deployment would cost. Changes nothing.
import type { EntityManager } from '@mikro-orm/postgresql';
import { hourlyCents } from '../../catalog/gpu-types.ts';
import { forecastPoolGrowth, growablePools } from '../../catalog/node-pools.ts';
import { newId } from '../../lib/ids.ts';
import type { PlannedResource } from '../../workflows/contract/deployment.ts';
import type { BudgetGuard } from '../alerts/budget-guard.ts';
import type { Principal } from '../auth/principal.ts';
import type { GpuClusterRecord } from '../clusters/gpu-cluster.entity.ts';
import type { ClusterCapacity, ClusterService } from '../clusters/service.ts';
import { ApiError, ConflictError } from '../core/errors.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { desiredOf, type DeploymentOrchestrator } from './orchestrator.ts';
import { assertAffordable, resolveAutoscaling, resolveScaling, type CreationChecks, type Serving } from './rules.ts';
import type { z } from 'zod';
import type { CreateDeploymentInput, DeploymentDryRun } from './schemas.ts';

/** One of creation's checks as the dry run reports it. */
export interface DryRunCheck {
  check: 'name' | 'model' | 'replicas' | 'model_fit' | 'accepting' | 'placement' | 'capacity' | 'credits' | 'budget';
  /** True only when the check ran and passed. */
  passed: boolean;
  /** `unverified`: the check could not run (the model check with the Hub unreachable); the reason says why. */
  status: 'passed' | 'failed' | 'unverified';
  reason: string;
}

/** What `pulumi preview` planned, how long it took, or why there is no plan. */
export interface DryRunPlan {
  resources: PlannedResource[];
  previewMs: number;
  failure: string | null;
}

function describeServing(serving: Serving): string {
  const context = serving.contextLength === null ? 'vLLM\'s own context length (Kiln has no figures for this model)' : `${serving.contextLength} tokens of context`;
  return `${serving.gpusPerReplica} GPU(s) per replica, ${context}, dtype ${serving.dtype}`;
}

/** Whether the replicas fit on the placed cluster now, once its pools grow (by how much, at what cost), or never (why): the answer's `fit`. */
type DryRunFit = z.infer<typeof DeploymentDryRun>['fit'];
type DryRunPoolGrowth = NonNullable<DryRunFit['growth']>['pools'][number];

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/**
 * The placed cluster's fit: the replicas that fit now on its nodes, and for those that do not, the growths the
 * rollout would make (forecastPoolGrowth: planPoolGrowth round after round, as the deployment's workflow asks it),
 * for a `local` cluster's pools or an `aws` cluster's node groups, which Kiln grows.
 */
function fitOn(cluster: GpuClusterRecord, placed: ClusterCapacity | undefined, replicas: number, gpu: string, gpusPerReplica: number): DryRunFit {
  if (!placed) return { verdict: 'cannot_fit', replicas, replicasFit: 0, growth: null, reason: `GPU cluster ${cluster.name} offers no GPUs of this type now` };
  const replicasFit = Math.min(placed.replicasFit, replicas);
  const where = `GPU cluster ${cluster.name}: ${placed.gpusFree} GPU(s) free${placed.measuredFrom === 'nodes' ? ' on its nodes' : ' by Kiln\'s records'}, ${gpusPerReplica} per replica${placed.note ? ` (${placed.note})` : ''}`;
  if (replicasFit === replicas) return { verdict: 'fits_now', replicas, replicasFit, growth: null, reason: `${replicas} of ${replicas} replicas fit now on ${where}` };
  const missing = replicas - replicasFit;
  const short = `Only ${replicasFit} of ${replicas} replicas fit now on ${where}`;
  const advice = 'lower replicas, or free or add GPUs';
  if ((cluster.provider !== 'local' && cluster.provider !== 'aws') || !cluster.spec) {
    return { verdict: 'cannot_fit', replicas, replicasFit, growth: null, reason: `${short}; the cluster has no node pool Kiln can grow; ${advice}` };
  }
  const forecast = forecastPoolGrowth(growablePools(cluster.spec), gpu, missing, gpusPerReplica);
  const pools = forecast.steps.map((s): DryRunPoolGrowth => ({
    pool: s.pool, gpuType: s.gpuType, gpusPerNode: s.gpusPerNode, fromNodes: s.fromNodes, toNodes: s.fromNodes + s.nodes, nodes: s.nodes, hourlyCents: Math.ceil(s.exactHourlyCents),
  }));
  const growth = pools.length
    ? { nodes: pools.reduce((sum, p) => sum + p.nodes, 0), hourlyCents: Math.ceil(forecast.steps.reduce((sum, s) => sum + s.exactHourlyCents, 0)), pools }
    : null;
  const grown = forecast.steps.map((s) => `adding ${plural(s.nodes, `${s.gpuType} node`)} to ${s.label} (${s.fromNodes} -> ${s.fromNodes + s.nodes})`).join(', then ');
  if (forecast.unplaced === 0) {
    return {
      verdict: 'fits_after_growth', replicas, replicasFit, growth,
      reason: `${replicasFit} of ${replicas} replicas fit now on ${where}; the other ${missing} fit once the rollout grows the cluster: ${grown}, ${growth!.hourlyCents} cents an hour more`,
    };
  }
  const partly = growth ? `growing the cluster (${grown}) places ${missing - forecast.unplaced} more, and ${forecast.unplaced} still ${forecast.unplaced === 1 ? 'does' : 'do'} not fit: ` : `no node pool grows for the other ${missing}: `;
  return { verdict: 'cannot_fit', replicas, replicasFit, growth, reason: `${short}; ${partly}${forecast.reason}; ${advice}` };
}

/** The capacity check: passes when the replicas fit now or once the pools grow; a conflict naming why otherwise. */
function capacityVerdict(fit: DryRunFit): string {
  if (fit.verdict === 'cannot_fit') throw new ConflictError(fit.reason, { field: 'replicas' });
  return fit.reason;
}

export interface DryRunDeps {
  /** Runs `pulumi preview` in a worker and waits for its plan. */
  orchestrator: Pick<DeploymentOrchestrator, 'preview'>;
  /** The cluster creation would choose, and what fits now on each cluster that offers the GPU type. */
  placement: Pick<ClusterService, 'place' | 'capacity'>;
  budgets: Pick<BudgetGuard, 'assertAllows'>;
}

export function createDryRun(deps: DryRunDeps, creation: Pick<CreationChecks, 'settle' | 'assertAccepting' | 'assertNameFree' | 'checkModel' | 'assertModelAllowed'>) {
  return async function dryRun(em: EntityManager, principal: Principal, input: CreateDeploymentInput, options: { preview: boolean } = { preview: true }) {
    const checks: DryRunCheck[] = [];
    /** Runs one of creation's checks; a failure becomes its reason. */
    const attempt = async <T>(check: DryRunCheck['check'], passed: (value: T) => string, run: () => T | Promise<T>): Promise<T | undefined> => {
      try {
        const value = await run();
        checks.push({ check, passed: true, status: 'passed', reason: passed(value) });
        return value;
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        checks.push({ check, passed: false, status: 'failed', reason: error.message });
        return undefined;
      }
    };
    await attempt('name', () => `no live deployment of the organization is named ${input.name}`, () => creation.assertNameFree(em, principal, input.name));
    // Unverified (the Hub unreachable) unless the organization refuses unverified models: then it blocks creation, as it would.
    let unverifiedRefused = false;
    const model = await attempt('model', (c) => c.reason, () => creation.checkModel(em, principal, input.model));
    if (model?.status === 'unverified') {
      const reported = checks.find((c) => c.check === 'model')!;
      Object.assign(reported, { passed: false, status: 'unverified' });
      try {
        await creation.assertModelAllowed(em, principal, input.model, model);
        reported.reason = `${model.reason}; the organization allows unverified models, so creation goes ahead`;
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        unverifiedRefused = true;
        reported.reason = error.message;
      }
    }
    const scaling = await attempt('replicas', (r) => `${r.replicas} replica(s), between ${r.minReplicas} and ${r.maxReplicas}`, () => resolveScaling(input, undefined));
    const serving = await attempt('model_fit', describeServing, () => creation.settle(em, principal, input.model, input.gpu, input));
    await attempt('accepting', () => 'new deployments are being accepted', () => creation.assertAccepting(em, principal));
    const cluster = await attempt('placement', (c) => `placed on GPU cluster ${c.name} (${c.id}), which offers ${input.gpu}`, () => deps.placement.place(em, principal.organizationId, input.gpu));
    const capacity = { gpu: input.gpu, replicas: scaling?.replicas ?? input.replicas ?? 1, gpusPerReplica: serving?.gpusPerReplica ?? input.gpusPerReplica ?? 1 };
    // What fits now, on every cluster that offers the type; the check is the placed cluster's.
    const clusters = await deps.placement.capacity(em, principal.organizationId, input.gpu, capacity.gpusPerReplica);
    let fit: DryRunFit = {
      verdict: 'cannot_fit', replicas: capacity.replicas, replicasFit: 0, growth: null, reason: checks.find((c) => c.check === 'placement')!.reason,
    };
    if (cluster) {
      fit = fitOn(cluster, clusters.find((c) => c.clusterId === cluster.id), capacity.replicas, input.gpu, capacity.gpusPerReplica);
      await attempt('capacity', (text: string) => text, () => capacityVerdict(fit));
    }
    const organization = await em.findOneOrFail(OrganizationSchema, principal.organizationId);
    await attempt('credits', () => `the balance of ${organization.creditsCents} cents covers an hour (${hourlyCents(capacity)} cents)`, () => assertAffordable(organization.creditsCents, capacity));
    await attempt('budget', () => 'no budget of the organization that refuses new deployments is reached', () => deps.budgets.assertAllows(em, principal));
    const valid = checks.every((c) => c.passed || (c.status === 'unverified' && !unverifiedRefused));
    let plan: DryRunPlan | null = null;
    if (valid && options.preview) {
      const previewId = newId('pre');
      const desired = desiredOf({ generation: 1, model: input.model, gpu: input.gpu, ...scaling!, autoscaling: resolveAutoscaling(input.autoscaling, undefined), ...serving!, replicaRequests: 0, running: true, restarts: 0, refreshes: 0, deleteRequested: false, forceDelete: false });
      const started = Date.now();
      const outcome = await deps.orchestrator.preview({ previewId, organizationId: principal.organizationId, name: input.name, desired, clusterId: cluster!.id });
      plan = 'resources' in outcome
        ? { resources: outcome.resources, previewMs: Date.now() - started, failure: null }
        : { resources: [], previewMs: Date.now() - started, failure: outcome.failure };
    }
    const hourly = hourlyCents(capacity);
    return {
      valid: valid && (plan === null || plan.failure === null),
      checks,
      deployment: {
        name: input.name, model: input.model, runtime: input.runtime, gpu: input.gpu, ...(scaling ?? {}), ...(serving ?? {}),
        cluster: cluster ? { id: cluster.id, name: cluster.name } : null,
      },
      capacity: clusters,
      fit,
      cost: {
        hourlyCents: hourly, dailyCents: hourly * 24, monthlyCents: hourly * 24 * 30, balanceCents: organization.creditsCents,
        hoursCovered: hourly > 0 ? Math.floor((organization.creditsCents / hourly) * 10) / 10 : null,
      },
      plan,
    };
  };
}
