// Deployments: the desired state of a vLLM deployment, per organization. create, update and remove are
// the single place where the deployment's workflow hears of a change: the desired state is committed first
// (with a raised generation), then sent; the workflow drives the status from there.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RecoveryAction } from '../recovery/schemas.ts';
import { DeploymentEventSchema } from './deployment-event.entity.ts';
import { desiredOf, type DeploymentOrchestrator } from './orchestrator.ts';
import type { PlannedResource } from '../../workflows/contract/deployment.ts';
import type { DesiredStateDelivery } from './desired-state-delivery.ts';
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
import type { BudgetGuard } from '../alerts/budget-guard.ts';
import type { ClusterCapacity, ClusterService } from '../clusters/service.ts';
import { newId } from '../../lib/ids.ts';
import {
  ApiError, ConflictError, DeploymentNotFoundError, InsufficientCreditsError, InvalidModelError, NotFoundError, ServiceUnavailableError, invalidField,
} from '../core/errors.ts';
import type { CursorCodec } from '../core/pagination.ts';
import { KNOWN_FLAGS, type FeatureFlags } from '../feature-flags/flags.ts';
import { assertLoadableModel } from '../models/model-source.ts';
import type { ModelService } from '../models/service.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { TemplateVersionSchema } from '../templates/template-version.entity.ts';
import { DeploymentSchema, type Deployment, type DeploymentStatus } from './deployment.entity.ts';
import { checkSecretReferences } from '../secrets/references.ts';
import type {
  CreateDeploymentInput, DeploymentActionInput, DeploymentViewBody, ListDeploymentsInput, ReplaceDeploymentInput, SORT_FIELDS, UpdateDeploymentInput,
} from './schemas.ts';

type SortColumn = 'createdAt' | 'updatedAt' | 'name' | 'status' | 'gpu' | 'id';
type Direction = 'asc' | 'desc';
const DATE_COLUMNS = new Set<SortColumn>(['createdAt', 'updatedAt']);

const SORT_COLUMNS: Record<(typeof SORT_FIELDS)[number], SortColumn> = {
  created_at: 'createdAt', updated_at: 'updatedAt', name: 'name', status: 'status', gpu: 'gpu',
};

const STATE_LABELS: Record<DeploymentStatus, DeploymentViewBody['state']> = {
  pending: 'PENDING', deploying: 'PENDING', running: 'HEALTHY', scaling: 'SCALING', scaled_to_zero: 'IDLE', updating: 'SCALING',
  stopping: 'STOPPED', stopped: 'STOPPED', failed: 'FAILED', deleting: 'DELETING', deleted: 'DELETED',
};

export interface DeploymentServiceDeps {
  endpointDomain: string;
  cursors: CursorCodec;
  orchestrator: Pick<DeploymentOrchestrator, 'inspect' | 'preview'>;
  /** Sends saved desired states to the workflows. */
  delivery: DesiredStateDelivery;
  /** Chooses the GPU cluster a new deployment runs on (503 GPU_UNAVAILABLE when none can take it). */
  placement: Pick<ClusterService, 'place' | 'assertOffers' | 'offeredGpuTypes' | 'capacity'>;
  flags: Pick<FeatureFlags, 'isEnabled'>;
  /** A reached budget (alerts/) refuses new deployments and growth: 402 BUDGET_EXCEEDED naming it. */
  budgets: Pick<BudgetGuard, 'assertAllows'>;
  /** What is known of a model (the catalog, the organization's models, the Hub), and the registry deployed models join. */
  models: Pick<ModelService, 'facts' | 'remember' | 'servingDefaults'>;
}

/** The deployment table's columns the list reads, as Kysely sees them. */
interface DeploymentTable {
  id: string; organization_id: string; deleted_at: string | null; name: string; model: string; runtime: string; gpu: string;
  status: DeploymentStatus; endpoint: string; replicas: number; current_replicas: number; min_replicas: number; max_replicas: number; autoscaling: AutoscalingPolicy;
  gpus_per_replica: number; context_length: number | null; dtype: Dtype; vllm_args: string[];
  failure_reason: string | null; template_id: string | null; template_version: number | null; created_at: string | Date; updated_at: string | Date;
}

const COLUMNS = {
  createdAt: 'created_at', updatedAt: 'updated_at', name: 'name', status: 'status', gpu: 'gpu', id: 'id',
} as const satisfies Record<SortColumn, keyof DeploymentTable>;

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

/** One of creation's checks as the dry run reports it. */
export interface DryRunCheck {
  check: 'name' | 'model' | 'replicas' | 'model_fit' | 'accepting' | 'placement' | 'capacity' | 'credits' | 'budget';
  passed: boolean;
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

export function createDeploymentService(deps: DeploymentServiceDeps) {
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

  /**
   * How a deployment of `model` on `gpu` is served: what the request leaves out takes the organization's defaults
   * for the model (its registry entry), then the fit check sizes the rest with what the models service knows.
   */
  async function settle(em: EntityManager, principal: Principal, model: string, gpu: string, want: ServingRequest): Promise<Serving> {
    const defaults = await deps.models.servingDefaults(em, principal, model);
    const asked = { ...want, contextLength: want.contextLength ?? defaults.contextLength, vllmArgs: want.vllmArgs ?? defaults.vllmArgs };
    return settleServing(model, gpu, asked, await factsOf(em, principal, model));
  }

  async function find(em: EntityManager, principal: Principal, id: string, lock = false): Promise<Deployment> {
    const deployment = await em.findOne(DeploymentSchema, { id, organization: principal.organizationId, deletedAt: null }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
    if (!deployment) throw new DeploymentNotFoundError(`Deployment ${id} not found`);
    return deployment;
  }

  /**
   * A change of desired state: made under the deployment's row lock, so concurrent changes each get their own
   * generation and the later one carries both (none is lost as an "old" message); sent once committed.
   */
  async function change(em: EntityManager, principal: Principal, id: string, apply: (deployment: Deployment, tx: EntityManager) => Promise<boolean | void> | boolean | void) {
    let changed = true;
    const deployment = await em.transactional(async (tx) => {
      const locked = await find(tx, principal, id, true);
      if (await apply(locked, tx) === false) changed = false;
      else locked.generation += 1;
      return locked;
    });
    if (changed || deployment.generation > deployment.sentGeneration) await deps.delivery.send(em, deployment);
    return deployment;
  }

  // Creation's checks that read the database, each throwing the error a failed one answers with: create stops at
  // the first, the dry run reports every one.
  async function assertAccepting(em: EntityManager, principal: Principal): Promise<void> {
    if (await deps.flags.isEnabled(em, KNOWN_FLAGS.pauseNewDeployments, principal.organizationId)) {
      throw new ServiceUnavailableError('New deployments are paused for maintenance; existing deployments keep running. Try again later', { flag: KNOWN_FLAGS.pauseNewDeployments });
    }
  }

  async function assertNameFree(em: EntityManager, principal: Principal, name: string): Promise<void> {
    if (await em.count(DeploymentSchema, { organization: principal.organizationId, name, deletedAt: null })) throw nameTaken(name);
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
     * The dry run (POST /v1/deployments/validate): every check creation makes, each reported with its reason
     * instead of stopping at the first; then, if all pass (and a preview is asked for), the plan of `pulumi preview`
     * on the cluster creation would choose, and what the deployment would cost. Changes nothing.
     */
    async dryRun(em: EntityManager, principal: Principal, input: CreateDeploymentInput, options: { preview: boolean } = { preview: true }) {
      const checks: DryRunCheck[] = [];
      /** Runs one of creation's checks; a failure becomes its reason. */
      const attempt = async <T>(check: DryRunCheck['check'], passed: (value: T) => string, run: () => T | Promise<T>): Promise<T | undefined> => {
        try {
          const value = await run();
          checks.push({ check, passed: true, reason: passed(value) });
          return value;
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          checks.push({ check, passed: false, reason: error.message });
          return undefined;
        }
      };
      await attempt('name', () => `no live deployment of the organization is named ${input.name}`, () => assertNameFree(em, principal, input.name));
      await attempt('model', () => `${input.model} is a model reference Kiln can load`, () => assertLoadableModel(input.model));
      const scaling = await attempt('replicas', (r) => `${r.replicas} replica(s), between ${r.minReplicas} and ${r.maxReplicas}`, () => resolveScaling(input, undefined));
      const serving = await attempt('model_fit', describeServing, () => settle(em, principal, input.model, input.gpu, input));
      await attempt('accepting', () => 'new deployments are being accepted', () => assertAccepting(em, principal));
      const cluster = await attempt('placement', (c) => `placed on GPU cluster ${c.name} (${c.id}), which offers ${input.gpu}`, () => deps.placement.place(em, principal.organizationId, input.gpu));
      const capacity = { gpu: input.gpu, replicas: scaling?.replicas ?? input.replicas ?? 1, gpusPerReplica: serving?.gpusPerReplica ?? input.gpusPerReplica ?? 1 };
      // What fits now, on every cluster that offers the type; the check is the placed cluster's.
      const clusters = await deps.placement.capacity(em, principal.organizationId, input.gpu, capacity.gpusPerReplica);
      if (cluster) {
        const placed = clusters.find((c) => c.clusterId === cluster.id);
        await attempt('capacity', (text: string) => text, () => capacityVerdict(placed, capacity.replicas, capacity.gpusPerReplica, cluster.name));
      }
      const organization = await em.findOneOrFail(OrganizationSchema, principal.organizationId);
      await attempt('credits', () => `the balance of ${organization.creditsCents} cents covers an hour (${hourlyCents(capacity)} cents)`, () => assertAffordable(organization.creditsCents, capacity));
      await attempt('budget', () => 'no budget of the organization that refuses new deployments is reached', () => deps.budgets.assertAllows(em, principal));
      const valid = checks.every((c) => c.passed);
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
        cost: {
          hourlyCents: hourly, dailyCents: hourly * 24, monthlyCents: hourly * 24 * 30, balanceCents: organization.creditsCents,
          hoursCovered: hourly > 0 ? Math.floor((organization.creditsCents / hourly) * 10) / 10 : null,
        },
        plan,
      };
    },

    async list(em: EntityManager, principal: Principal, query: ListDeploymentsInput) {
      const ordering = query.sort.map(([field, dir]) => (dir === 'desc' ? '-' : '') + field).join(',');
      // Sort columns, then the id as tie-break: every row has a distinct position.
      const keys: Array<readonly [SortColumn, Direction]> = [...query.sort.map(([field, dir]) => [SORT_COLUMNS[field], dir] as const), ['id', query.sort.at(-1)![1]]];
      const after = query.cursor ? positionFrom(deps.cursors.decode(query.cursor, ordering), keys.length) : undefined;
      // The list is on every dashboard refresh: one parameterized query built with Kysely (the query builder
      // and its row mapping cost several times more), one row past the page to learn whether another follows.
      let select = em.getKysely<{ deployment: DeploymentTable }>().selectFrom('deployment')
        .select(['id', 'name', 'model', 'runtime', 'gpu', 'status', 'endpoint', 'replicas', 'current_replicas as currentReplicas',
          'min_replicas as minReplicas', 'max_replicas as maxReplicas', 'autoscaling', 'gpus_per_replica as gpusPerReplica', 'context_length as contextLength',
          'dtype', 'vllm_args as vllmArgs', 'failure_reason as failureReason', 'template_id as templateId', 'template_version as templateVersion', 'created_at as createdAt',
          'updated_at as updatedAt'])
        .where('organization_id', '=', principal.organizationId)
        .where('deleted_at', 'is', null);
      if (query.status) select = select.where('status', 'in', query.status);
      if (query.created_after) select = select.where('created_at', '>=', new Date(`${query.created_after}T00:00:00Z`));
      if (query.created_before) select = select.where('created_at', '<', new Date(`${query.created_before}T00:00:00Z`));
      // Rows strictly after the position in the (mixed-direction) ordering: a keyset condition. The bound on
      // the first key alone lets PostgreSQL start its index scan at the position instead of filtering up to it.
      if (after) {
        const value = (i: number) => (DATE_COLUMNS.has(keys[i]![0]) ? new Date(after[i]!) : after[i]!);
        const [first, firstDir] = keys[0]!;
        select = select.where((eb) => eb.and([
          eb(COLUMNS[first], firstDir === 'asc' ? '>=' : '<=', value(0)),
          eb.or(keys.map(([column, dir], i) => eb.and([
            ...keys.slice(0, i).map(([before], j) => eb(COLUMNS[before], '=', value(j))),
            eb(COLUMNS[column], dir === 'asc' ? '>' : '<', value(i)),
          ]))),
        ]));
      }
      for (const [column, dir] of keys) select = select.orderBy(COLUMNS[column], dir);
      // Timestamps arrive as the driver hands them over (text): dates from here on.
      const rows = (await select.limit(query.limit + 1).execute())
        .map((row) => ({ ...row, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) }));
      const page = deps.cursors.page(rows, query.limit, ordering, (last) => keys.map(([column]) => positionValue(last[column])));
      return { ...page, items: page.items.map((d) => view(d)) };
    },

    get: async (em: EntityManager, principal: Principal, id: string) => view(await find(em, principal, id)),

    /** How a deployment of `model` on `gpu` would be served, settled as creation settles it (with what the models service knows): templates store what they would deploy. */
    serving: (em: EntityManager, principal: Principal, model: string, gpu: string, want: ServingRequest) => settle(em, principal, model, gpu, want),

    /** `from`: the template version it is made from (POST /v1/templates/{id}/deploy), which the row remembers. */
    async create(em: EntityManager, principal: Principal, input: CreateDeploymentInput, from?: { templateId: string; templateVersion: number }) {
      assertLoadableModel(input.model);
      const scaling = resolveScaling(input, undefined);
      const serving = await settle(em, principal, input.model, input.gpu, input);
      await assertAccepting(em, principal);
      await deps.budgets.assertAllows(em, principal);
      const organization = await em.findOneOrFail(OrganizationSchema, principal.organizationId);
      assertAffordable(organization.creditsCents, { gpu: input.gpu, ...scaling, ...serving });
      await assertNameFree(em, principal, input.name);
      const secrets = await checkSecretReferences(em, principal.organizationId, input.secrets ?? []);
      const cluster = await deps.placement.place(em, principal.organizationId, input.gpu);
      const id = newId('dep');
      const deployment = em.create(DeploymentSchema, {
        id, organization, cluster, name: input.name, model: input.model, runtime: input.runtime, gpu: input.gpu,
        status: 'pending', endpoint: `https://${id.slice('dep_'.length)}.${deps.endpointDomain}`, currentReplicas: 0, ...scaling, ...serving,
        autoscaling: resolveAutoscaling(input.autoscaling, undefined), secrets: secrets.length ? secrets : null,
        templateId: from?.templateId ?? null, templateVersion: from?.templateVersion ?? null,
      });
      await em.flush().catch((error: unknown) => {
        if (error instanceof Error && error.name === 'UniqueConstraintViolationException') throw nameTaken(input.name);
        throw error;
      });
      await deps.models.remember(em, principal, input.model);
      await deps.delivery.send(em, deployment);
      return { id: deployment.id, name: deployment.name, status: deployment.status, endpoint: deployment.endpoint };
    },

    async update(em: EntityManager, principal: Principal, id: string, input: UpdateDeploymentInput | ReplaceDeploymentInput, replace: boolean) {
      if (input.model !== undefined) assertLoadableModel(input.model);
      return view(await change(em, principal, id, async (deployment, tx) => {
        if (deployment.deleteRequested) throw new ConflictError(`Deployment ${id} is being deleted`, { field: 'id' });
        // An upgrade to a version of its template: that version's configuration under what the request sets itself.
        const templateVersion = 'templateVersion' in input ? input.templateVersion : undefined;
        if (templateVersion !== undefined) input = { ...await templateConfiguration(tx, deployment, templateVersion), ...definedFields(input) };
        const scaling = resolveScaling(input, replace ? undefined : deployment);
        // A deployment stays on its cluster: a GPU type that cluster lacks cannot be had.
        if (input.gpu !== undefined && input.gpu !== deployment.gpu && deployment.cluster) await deps.placement.assertOffers(tx, deployment.cluster.id, input.gpu);
        const gpu = input.gpu ?? deployment.gpu;
        const model = input.model ?? deployment.model;
        // A new model or GPU type is sized afresh unless the request sizes it; otherwise the rest is kept.
        const resized = replace || model !== deployment.model || gpu !== deployment.gpu;
        const serving = await settle(tx, principal, model, gpu, {
          gpusPerReplica: input.gpusPerReplica ?? (resized ? undefined : deployment.gpusPerReplica),
          contextLength: input.contextLength ?? (resized ? undefined : deployment.contextLength ?? undefined),
          dtype: input.dtype ?? (replace ? undefined : deployment.dtype),
          vllmArgs: input.vllmArgs ?? (replace ? undefined : deployment.vllmArgs),
        });
        const autoscaling = resolveAutoscaling('autoscaling' in input ? input.autoscaling : undefined, replace ? undefined : deployment.autoscaling);
        const next = { gpu, ...scaling, ...serving, autoscaling };
        if (hourlyCents(next) > hourlyCents(deployment)) await deps.budgets.assertAllows(tx, principal, { deploymentId: id });
        if (hourlyCents(next) > hourlyCents(deployment)) await assertBalanceCovers(tx, principal, next);
        if (model !== deployment.model) await deps.models.remember(tx, principal, model);
        if (input.replicas !== undefined) deployment.replicaRequests += 1;
        // PUT replaces the whole configuration: no list, no secrets. PATCH keeps them unless given.
        if (input.secrets !== undefined || replace) {
          const secrets = await checkSecretReferences(tx, principal.organizationId, input.secrets ?? []);
          deployment.secrets = secrets.length ? secrets : null;
        }
        Object.assign(deployment, { model, ...next });
        if (templateVersion !== undefined) deployment.templateVersion = templateVersion;
      }));
    },

    async act(em: EntityManager, principal: Principal, id: string, input: DeploymentActionInput) {
      const notices: string[] = [];
      const changed = await change(em, principal, id, async (deployment, tx) => {
        if (deployment.deleteRequested) throw new ConflictError(`Deployment ${id} is being deleted`, { field: 'id' });
        switch (input.action) {
          case 'stop': deployment.running = false; break;
          case 'start':
            if (!deployment.running) await deps.budgets.assertAllows(tx, principal, { deploymentId: id });
            if (!deployment.running) await assertBalanceCovers(tx, principal, deployment);
            deployment.running = true;
            break;
          case 'restart': deployment.restarts += 1; break;
          case 'scale':
            if (input.replicas > deployment.replicas) await deps.budgets.assertAllows(tx, principal, { deploymentId: id });
            if (input.replicas > deployment.replicas) await assertBalanceCovers(tx, principal, { ...deployment, replicas: input.replicas });
            notices.push(...widenBoundsFor(deployment, input.replicas));
            Object.assign(deployment, resolveScaling({ replicas: input.replicas }, deployment));
            deployment.replicaRequests += 1;
            break;
        }
      });
      return { ...view(changed), notices };
    },

    /** Recovery: a deployment's failure, its recent events and what its workflow is retrying. */
    async inspect(em: EntityManager, principal: Principal, id: string) {
      const deployment = await find(em, principal, id);
      const events = await em.find(DeploymentEventSchema, { deploymentId: id }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 20 });
      return {
        id, name: deployment.name, status: deployment.status, failureReason: deployment.failureReason ?? null, generation: deployment.generation,
        events: events.map((e) => ({ type: e.type, generation: e.generation, createdAt: e.createdAt.toISOString() })),
        workflow: await deps.orchestrator.inspect(id),
      };
    },

    /** Recovery actions: retry a failed deployment (optionally after `pulumi refresh`), or force its deletion. */
    async recover(em: EntityManager, principal: Principal, id: string, action: RecoveryAction) {
      return view(await change(em, principal, id, (deployment) => {
        if (action === 'force_delete') {
          Object.assign(deployment, { deleteRequested: true, forceDelete: true, status: 'deleting' });
        } else {
          if (deployment.status !== 'failed') throw new ConflictError(`Deployment ${id} has not failed (status ${deployment.status}); there is nothing to retry`, { field: 'id' });
          if (action === 'refresh_and_retry') deployment.refreshes += 1;
        }
      }));
    },

    /** Recovery: forgets a failure's reason once it has been dealt with. */
    async clearFailure(em: EntityManager, principal: Principal, id: string) {
      const deployment = await find(em, principal, id);
      deployment.failureReason = null;
      await em.flush();
      return view(deployment);
    },

    async failed(em: EntityManager, principal: Principal) {
      const deployments = await em.find(DeploymentSchema, { organization: principal.organizationId, status: 'failed', deletedAt: null }, { orderBy: { updatedAt: 'desc', id: 'desc' }, limit: 100 });
      return deployments.map((d) => ({ id: d.id, name: d.name, failureReason: d.failureReason ?? null, updatedAt: d.updatedAt.toISOString() }));
    },

    async remove(em: EntityManager, principal: Principal, id: string) {
      // A repeated DELETE changes nothing; it only sends again what was not delivered.
      const deployment = await change(em, principal, id, (d) => {
        if (d.deleteRequested) return false;
        Object.assign(d, { deleteRequested: true, status: 'deleting' });
      });
      return { id: deployment.id, status: deployment.status };
    },
  };
}

function positionValue(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

/** The signed cursor's position: one string per sort key (a signed cursor is well formed by construction). */
function positionFrom(decoded: string, length: number): string[] {
  const position = JSON.parse(decoded) as unknown;
  if (!Array.isArray(position) || position.length !== length) throw new Error('cursor position does not match its ordering');
  return position as string[];
}


/** Creating, growing or starting a deployment: the balance must cover at least one hour of its capacity (402). */
function assertAffordable(creditsCents: number, capacity: Capacity): void {
  const required = hourlyCents(capacity);
  if (creditsCents < required) {
    throw new InsufficientCreditsError('Not enough credits for this deployment', { required_cents: required, available_cents: creditsCents });
  }
}

async function assertBalanceCovers(em: EntityManager, principal: Principal, capacity: Capacity): Promise<void> {
  assertAffordable((await em.findOneOrFail(OrganizationSchema, principal.organizationId)).creditsCents, capacity);
}

/**
 * Fills defaults (from the current deployment when patching) and checks the bounds the stack will check. The
 * schema has refused counts out of range already, so what remains is min <= replicas <= max.
 */
/** The capacity check's reason: how many of the replicas fit now on the placed cluster; a conflict when not all do. */
function capacityVerdict(placed: ClusterCapacity | undefined, replicas: number, gpusPerReplica: number, clusterName: string): string {
  if (!placed) throw new ConflictError(`GPU cluster ${clusterName} offers no GPUs of this type now`, { field: 'gpu' });
  const fit = Math.min(placed.replicasFit, replicas);
  const where = `GPU cluster ${clusterName}: ${placed.gpusFree} GPU(s) free${placed.measuredFrom === 'nodes' ? ' on its nodes' : ' by Kiln\'s records'}, ${gpusPerReplica} per replica${placed.note ? ` (${placed.note})` : ''}`;
  if (placed.replicasFit < replicas) {
    throw new ConflictError(`Only ${fit} of ${replicas} replicas fit now on ${where}; lower replicas, or free or add GPUs`, { field: 'replicas' });
  }
  return `${replicas} of ${replicas} replicas fit now on ${where}`;
}

/**
 * A scale means "run this many": a count outside the autoscaler's bounds moves the bound rather than being
 * refused (the caller may update the deployment, which is what the bounds are). Says what it moved.
 */
function widenBoundsFor(deployment: Pick<Deployment, 'minReplicas' | 'maxReplicas'>, replicas: number): string[] {
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

export function resolveScaling(input: Scaling, current: Pick<Deployment, 'replicas' | 'minReplicas' | 'maxReplicas'> | undefined) {
  const replicas = input.replicas ?? current?.replicas ?? Math.min(Math.max(DEFAULT_REPLICAS, input.minReplicas ?? 0), input.maxReplicas ?? MAX_REPLICAS);
  const minReplicas = input.minReplicas ?? current?.minReplicas ?? Math.min(replicas, input.maxReplicas ?? replicas);
  const maxReplicas = input.maxReplicas ?? current?.maxReplicas ?? Math.max(replicas, minReplicas, 1);
  const problem = replicaBoundsProblem({ replicas, minReplicas, maxReplicas });
  if (problem) throw invalidField('replicas', problem);
  return { replicas, minReplicas, maxReplicas };
}

/** The autoscaler's policy: what the request sets, over the current one (when patching), over Kiln's defaults. */
function resolveAutoscaling(input: Partial<AutoscalingPolicy> | undefined, current: AutoscalingPolicy | undefined): AutoscalingPolicy {
  return { ...DEFAULT_AUTOSCALING, ...current, ...definedFields(input ?? {}) };
}

/**
 * PATCH templateVersion: that version's configuration of the template the deployment was made from (public
 * or its organization's: row-level security shows no other); the replica count stays within its bounds.
 */
async function templateConfiguration(em: EntityManager, deployment: Deployment, version: number): Promise<UpdateDeploymentInput> {
  if (!deployment.templateId) throw invalidField('templateVersion', 'the deployment was not made from a template');
  const found = await em.findOne(TemplateVersionSchema, { template: deployment.templateId, version });
  if (!found) throw invalidField('templateVersion', `template ${deployment.templateId} has no version ${version} to upgrade to`);
  return {
    model: found.model, gpu: found.gpu, gpusPerReplica: found.gpusPerReplica as UpdateDeploymentInput['gpusPerReplica'], minReplicas: found.minReplicas, maxReplicas: found.maxReplicas,
    replicas: Math.min(Math.max(deployment.replicas, found.minReplicas), found.maxReplicas),
    contextLength: found.contextLength ?? undefined, dtype: found.dtype as Dtype, vllmArgs: found.vllmArgs,
  };
}

/** The fields a request sets (JSON has no undefined, but a parsed optional field may be present as one). */
function definedFields<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function nameTaken(name: string): ConflictError {
  return new ConflictError(`A deployment named ${name} already exists in this organization`, { field: 'name' });
}

type DeploymentFields = Pick<Deployment, 'id' | 'name' | 'model' | 'runtime' | 'gpu' | 'status' | 'endpoint' | 'replicas' | 'currentReplicas'
  | 'minReplicas' | 'maxReplicas' | 'autoscaling' | 'gpusPerReplica' | 'contextLength' | 'dtype' | 'vllmArgs' | 'failureReason' | 'templateId' | 'templateVersion' | 'createdAt' | 'updatedAt'>;

function view(d: DeploymentFields): DeploymentViewBody {
  return {
    id: d.id, name: d.name, model: d.model, runtime: d.runtime, gpu: d.gpu, gpuType: d.gpu,
    status: d.status, state: STATE_LABELS[d.status], endpoint: d.endpoint,
    replicas: d.replicas, currentReplicas: d.currentReplicas, minReplicas: d.minReplicas, maxReplicas: d.maxReplicas, autoscaling: d.autoscaling,
    gpusPerReplica: d.gpusPerReplica, contextLength: d.contextLength ?? null, dtype: d.dtype, vllmArgs: d.vllmArgs,
    failureReason: d.failureReason ?? null, templateId: d.templateId ?? null, templateVersion: d.templateVersion ?? null,
    createdAt: d.createdAt.toISOString(), updatedAt: d.updatedAt.toISOString(),
  };
}

export type DeploymentService = ReturnType<typeof createDeploymentService>;
