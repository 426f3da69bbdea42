// The rules a deployment's configuration follows in the API: how its serving is settled, its replica bounds and
// autoscaling policy resolved, what its balance must cover, and creation's checks that read the database, which
// creation, updates and the dry run share (catalog/deployment-rules.ts holds the constants every side shares).
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  DTYPES, GPUS_PER_REPLICA_CHOICES, LOADABLE_MODEL, MANAGED_VLLM_FLAGS, MAX_CONTEXT_LENGTH, MAX_MODEL_LENGTH, MAX_REPLICAS, MAX_VLLM_ARGS, MIN_REPLICAS,
  MODEL_SOURCES, NAME_PATTERN, DEFAULT_REPLICAS, replicaBoundsProblem, type Dtype,
} from '../../catalog/deployment-rules.ts';
import { DEFAULT_AUTOSCALING, type AutoscalingPolicy } from '../../catalog/autoscaling.ts';
import { findGpuType, GPU_TYPES, hourlyCents, type Capacity } from '../../catalog/gpu-types.ts';
import { PLAN_RATE_LIMITS } from '../../catalog/plans.ts';
import { choosePlacement } from '../../catalog/model-fit.ts';
import { findCatalogModel, type CatalogModel } from '../../catalog/models.ts';
import type { Principal } from '../auth/principal.ts';
import type { ClusterService } from '../clusters/service.ts';
import { ConflictError, InsufficientCreditsError, InvalidModelError, NotFoundError, ServiceUnavailableError, invalidField } from '../core/errors.ts';
import { KNOWN_FLAGS, type FeatureFlags } from '../feature-flags/flags.ts';
import type { ModelService } from '../models/service.ts';
import { assertLoadableModel } from '../models/model-source.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { DeploymentSchema, type Deployment } from './deployment.entity.ts';

interface Scaling { replicas?: number | undefined; minReplicas?: number | undefined; maxReplicas?: number | undefined }

/** How vLLM serves a deployment, as asked for: what is left out is settled by settleServing. */
export interface ServingRequest {
  gpusPerReplica?: number | undefined;
  contextLength?: number | undefined;
  dtype?: Dtype | undefined;
  vllmArgs?: string[] | undefined;
}

/** How vLLM serves a deployment, settled: what the row stores and the workflow applies. */
export interface Serving {
  gpusPerReplica: number;
  contextLength: number | null;
  dtype: Dtype;
  vllmArgs: string[];
}

/** What Kiln knows of a model reference's size: the catalog's figures (hf:// is the same Hugging Face id). */
function modelFacts(model: string): CatalogModel | undefined {
  return findCatalogModel(model.replace(/^hf:\/\//, ''));
}

/**
 * The model fit check creation, update and the dry run share: a model with known figures gets the fewest GPUs
 * that hold it and the longest context those hold, unless asked otherwise; what cannot fit is 422 on the field
 * to change, with the arithmetic (catalog/model-fit.ts choosePlacement). A model without figures runs as asked.
 * `facts`: what the models service knows of the model (factsOf); the catalog's figures alone when not given.
 */
export function settleServing(model: string, gpu: string, want: ServingRequest, facts: CatalogModel | undefined = modelFacts(model)): Serving {
  const rest = { dtype: want.dtype ?? 'auto', vllmArgs: want.vllmArgs ?? [] };
  if (!facts) return { gpusPerReplica: want.gpusPerReplica ?? 1, contextLength: want.contextLength ?? null, ...rest };
  const choice = choosePlacement(facts, findGpuType(gpu)!, want);
  if ('problem' in choice) throw invalidField(choice.problem.field, choice.problem.message);
  return { gpusPerReplica: choice.gpusPerReplica, contextLength: choice.contextLength, ...rest };
}

/**
 * Fills defaults (from the current deployment when patching) and checks the bounds the stack will check. The
 * schema has refused counts out of range already, so what remains is min <= replicas <= max.
 */
export function resolveScaling(input: Scaling, current: Pick<Deployment, 'replicas' | 'minReplicas' | 'maxReplicas'> | undefined) {
  const replicas = input.replicas ?? current?.replicas ?? Math.min(Math.max(DEFAULT_REPLICAS, input.minReplicas ?? 0), input.maxReplicas ?? MAX_REPLICAS);
  const minReplicas = input.minReplicas ?? current?.minReplicas ?? Math.min(replicas, input.maxReplicas ?? replicas);
  const maxReplicas = input.maxReplicas ?? current?.maxReplicas ?? Math.max(replicas, minReplicas, 1);
  const problem = replicaBoundsProblem({ replicas, minReplicas, maxReplicas });
  if (problem) throw invalidField('replicas', problem);
  return { replicas, minReplicas, maxReplicas };
}

/**
 * A scale means "run this many": a count outside the autoscaler's bounds moves the bound rather than being
 * refused (the caller may update the deployment, which is what the bounds are). Says what it moved.
 */
export function widenBoundsFor(deployment: Pick<Deployment, 'minReplicas' | 'maxReplicas'>, replicas: number): string[] {
  const notices: string[] = [];
  if (replicas > deployment.maxReplicas) {
    notices.push(`maxReplicas raised from ${deployment.maxReplicas} to ${replicas} to run ${replicas} replicas; the autoscaler may now use up to ${replicas}.`);
    deployment.maxReplicas = replicas;
  }
  if (replicas < deployment.minReplicas) {
    notices.push(`minReplicas lowered from ${deployment.minReplicas} to ${replicas} to run ${replicas} replica${replicas === 1 ? '' : 's'}.`);
    deployment.minReplicas = replicas;
  }
  return notices;
}

/** The autoscaler's policy: what the request sets, over the current one (when patching), over Kiln's defaults. */
export function resolveAutoscaling(input: Partial<AutoscalingPolicy> | undefined, current: AutoscalingPolicy | undefined): AutoscalingPolicy {
  return { ...DEFAULT_AUTOSCALING, ...current, ...definedFields(input ?? {}) };
}

/** The fields a request sets (JSON has no undefined, but a parsed optional field may be present as one). */
export function definedFields<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** Creating, growing or starting a deployment: the balance must cover at least one hour of its capacity (402). */
export function assertAffordable(creditsCents: number, capacity: Capacity): void {
  const required = hourlyCents(capacity);
  if (creditsCents < required) {
    throw new InsufficientCreditsError('Not enough credits for this deployment', { required_cents: required, available_cents: creditsCents });
  }
}

export function nameTaken(name: string): ConflictError {
  return new ConflictError(`A deployment named ${name} already exists in this organization`, { field: 'name' });
}

/** The model check: passed, or unverified (it could not run: the Hub could not be reached) with why. */
export interface ModelCheck {
  readonly status: 'passed' | 'unverified';
  readonly reason: string;
}

export interface CreationCheckDeps {
  /** The GPU types the organization's clusters offer now, for the rules' GPU list. */
  placement: Pick<ClusterService, 'offeredGpuTypes'>;
  flags: Pick<FeatureFlags, 'isEnabled'>;
  /** What is known of a model (the catalog, the organization's models, the Hub), and the organization's defaults for it. */
  models: Pick<ModelService, 'facts' | 'servingDefaults'>;
}

export function createCreationChecks(deps: CreationCheckDeps) {
  /**
   * The model's figures from the models service (the catalog, the organization's models, the Hub). A Hub that
   * cannot answer leaves them unknown, so the deployment runs as asked, as an s3/gs/pvc model does; a model
   * the Hub does not have is 400 INVALID_MODEL, as a malformed one is.
   */
  async function factsOf(em: EntityManager, principal: Principal, model: string): Promise<CatalogModel | undefined> {
    try {
      return await deps.models.facts(em, principal, model);
    } catch (error) {
      if (error instanceof ServiceUnavailableError) return undefined;
      if (error instanceof NotFoundError) throw new InvalidModelError(error.message, { model, valid_sources: MODEL_SOURCES });
      throw error;
    }
  }

  return {
    /**
     * The rules a creation request follows (GET /v1/deployments/validate), so a form can check itself before
     * sending: the same constants the checks use, the GPU types with what is available now, and the caller's plan.
     */
    async rules(em: EntityManager, principal: Principal) {
      const offered = await deps.placement.offeredGpuTypes(em, principal.organizationId);
      const organization = await em.findOneOrFail(OrganizationSchema, principal.organizationId);
      return {
        name: { pattern: NAME_PATTERN.source, maxLength: 63 },
        model: { pattern: LOADABLE_MODEL.source, maxLength: MAX_MODEL_LENGTH, sources: MODEL_SOURCES },
        runtimes: ['vllm'],
        replicas: { min: MIN_REPLICAS, max: MAX_REPLICAS },
        gpusPerReplica: [...GPUS_PER_REPLICA_CHOICES],
        contextLength: { min: 1, max: MAX_CONTEXT_LENGTH },
        dtypes: [...DTYPES],
        vllmArgs: { max: MAX_VLLM_ARGS, managedFlags: [...MANAGED_VLLM_FLAGS] },
        gpuTypes: GPU_TYPES.map((g) => ({ id: g.id, name: g.name, memoryGb: g.memoryGb, hourlyPriceUsd: g.hourlyPriceUsd, available: offered.has(g.id) })),
        plan: {
          name: organization.plan, rateLimit: PLAN_RATE_LIMITS[organization.plan], creditsCents: organization.creditsCents,
          // Creation asks that the balance cover an hour of the new deployment's GPUs.
          maxHourlyCents: organization.creditsCents,
        },
      };
    },

    /**
     * How a deployment of `model` on `gpu` is served: what the request leaves out takes the organization's defaults
     * for the model (its registry entry), then the fit check sizes the rest with what the models service knows.
     */
    async settle(em: EntityManager, principal: Principal, model: string, gpu: string, want: ServingRequest): Promise<Serving> {
      const defaults = await deps.models.servingDefaults(em, principal, model);
      const asked = { ...want, contextLength: want.contextLength ?? defaults.contextLength, vllmArgs: want.vllmArgs ?? defaults.vllmArgs };
      return settleServing(model, gpu, asked, await factsOf(em, principal, model));
    },

    /**
     * The model check: a reference Kiln can load (400 INVALID_MODEL otherwise), that the catalog, the organization's
     * registry or the Hub knows (400 INVALID_MODEL when the Hub does not have it). A Hub that cannot be reached
     * leaves it `unverified` with the reason: a check that cannot run never says passed.
     */
    async checkModel(em: EntityManager, principal: Principal, model: string): Promise<ModelCheck> {
      assertLoadableModel(model);
      try {
        await deps.models.facts(em, principal, model);
      } catch (error) {
        if (error instanceof ServiceUnavailableError) return { status: 'unverified', reason: `${model} could not be checked: ${error.message}` };
        if (error instanceof NotFoundError) throw new InvalidModelError(error.message, { model, valid_sources: MODEL_SOURCES });
        throw error;
      }
      return { status: 'passed', reason: `${model} is a model reference Kiln can load` };
    },

    /** An unverified model where the organization refuses them (its settings' unverifiedModels): 422 naming the model and why. */
    async assertModelAllowed(em: EntityManager, principal: Principal, model: string, check: ModelCheck): Promise<void> {
      if (check.status !== 'unverified') return;
      const organization = await em.findOneOrFail(OrganizationSchema, principal.organizationId);
      if (organization.unverifiedModels === 'refuse') {
        throw invalidField('model', `${check.reason}; the organization refuses unverified models (unverifiedModels in its settings), so ${model} cannot be deployed until it can be checked`);
      }
    },

    // Creation's checks that read the database, each throwing the error a failed one answers with: create stops at
    // the first, the dry run reports every one.
    async assertAccepting(em: EntityManager, principal: Principal): Promise<void> {
      if (await deps.flags.isEnabled(em, KNOWN_FLAGS.pauseNewDeployments, principal.organizationId)) {
        throw new ServiceUnavailableError('New deployments are paused for maintenance; existing deployments keep running. Try again later', { flag: KNOWN_FLAGS.pauseNewDeployments });
      }
    },

    async assertNameFree(em: EntityManager, principal: Principal, name: string): Promise<void> {
      if (await em.count(DeploymentSchema, { organization: principal.organizationId, name, deletedAt: null })) throw nameTaken(name);
    },
  };
}

export type CreationChecks = ReturnType<typeof createCreationChecks>;
