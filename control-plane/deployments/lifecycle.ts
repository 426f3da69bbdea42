// A deployment's life as users ask for it: read, create, update (PATCH/PUT), actions (stop, start, restart,
// scale) and delete. Each is a change of desired state: committed first (with a raised generation), then sent to
// the deployment's workflow, which drives the status from there (changeDesiredState; create sends generation 1).
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Dtype } from '../../catalog/deployment-rules.ts';
import { hourlyCents, type Capacity } from '../../catalog/gpu-types.ts';
import { newId } from '../../lib/ids.ts';
import type { BudgetGuard } from '../alerts/budget-guard.ts';
import type { Principal } from '../auth/principal.ts';
import type { ClusterService } from '../clusters/service.ts';
import { ConflictError, DeploymentNotFoundError, invalidField } from '../core/errors.ts';
import { assertLoadableModel } from '../models/model-source.ts';
import type { ModelService } from '../models/service.ts';
import { OrganizationSchema } from '../organizations/organization.entity.ts';
import { checkSecretReferences } from '../secrets/references.ts';
import { TemplateVersionSchema } from '../templates/template-version.entity.ts';
import { DeploymentSchema, type Deployment } from './deployment.entity.ts';
import type { DesiredStateDelivery } from './desired-state-delivery.ts';
import {
  assertAffordable, definedFields, nameTaken, resolveAutoscaling, resolveScaling, widenBoundsFor, type CreationChecks,
} from './rules.ts';
import type { CreateDeploymentInput, DeploymentActionInput, ReplaceDeploymentInput, UpdateDeploymentInput } from './schemas.ts';
import { deploymentView } from './view.ts';

/** The organization's live deployment `id` (404 otherwise); `lock`: under its row lock, for a change. */
export async function findDeployment(em: EntityManager, principal: Principal, id: string, lock = false): Promise<Deployment> {
  const deployment = await em.findOne(DeploymentSchema, { id, organization: principal.organizationId, deletedAt: null }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  if (!deployment) throw new DeploymentNotFoundError(`Deployment ${id} not found`);
  return deployment;
}

/** What a change does to the locked row; false: nothing to change. */
type ApplyChange = (deployment: Deployment, tx: EntityManager) => Promise<boolean | void> | boolean | void;

/**
 * A change of desired state: made under the deployment's row lock, so concurrent changes each get their own
 * generation and the later one carries both (none is lost as an "old" message); sent once committed. When
 * `apply` changes nothing, only what was not delivered is sent again.
 */
export async function changeDesiredState(delivery: DesiredStateDelivery, em: EntityManager, principal: Principal, id: string, apply: ApplyChange): Promise<Deployment> {
  let changed = true;
  const deployment = await em.transactional(async (tx) => {
    const locked = await findDeployment(tx, principal, id, true);
    if (await apply(locked, tx) === false) changed = false;
    else locked.generation += 1;
    return locked;
  });
  if (changed || deployment.generation > deployment.sentGeneration) await delivery.send(em, deployment);
  return deployment;
}

function assertNotDeleting(deployment: Deployment): void {
  if (deployment.deleteRequested) throw new ConflictError(`Deployment ${deployment.id} is being deleted`, { field: 'id' });
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

export interface DeploymentLifecycleDeps {
  endpointDomain: string;
  /** Sends saved desired states to the workflows. */
  delivery: DesiredStateDelivery;
  /** Chooses the GPU cluster a new deployment runs on (503 GPU_UNAVAILABLE when none can take it). */
  placement: Pick<ClusterService, 'place' | 'assertOffers'>;
  /** A reached budget (alerts/) refuses new deployments and growth: 402 BUDGET_EXCEEDED naming it. */
  budgets: Pick<BudgetGuard, 'assertAllows'>;
  /** The registry deployed models join. */
  models: Pick<ModelService, 'remember'>;
}

export function createDeploymentLifecycle(deps: DeploymentLifecycleDeps, creation: Pick<CreationChecks, 'settle' | 'assertAccepting' | 'assertNameFree' | 'checkModel' | 'assertModelAllowed'>) {
  /** Growing or starting a deployment: no budget that acts may be reached, and the balance must cover an hour. */
  async function assertMayGrow(tx: EntityManager, principal: Principal, id: string, capacity: Capacity): Promise<void> {
    await deps.budgets.assertAllows(tx, principal, { deploymentId: id });
    assertAffordable((await tx.findOneOrFail(OrganizationSchema, principal.organizationId)).creditsCents, capacity);
  }

  return {
    get: async (em: EntityManager, principal: Principal, id: string) => deploymentView(await findDeployment(em, principal, id)),

    /** `from`: the template version it is made from (POST /v1/templates/{id}/deploy), which the row remembers. */
    async create(em: EntityManager, principal: Principal, input: CreateDeploymentInput, from?: { templateId: string; templateVersion: number }) {
      const modelCheck = await creation.checkModel(em, principal, input.model);
      await creation.assertModelAllowed(em, principal, input.model, modelCheck);
      const scaling = resolveScaling(input, undefined);
      const serving = await creation.settle(em, principal, input.model, input.gpu, input);
      await creation.assertAccepting(em, principal);
      await deps.budgets.assertAllows(em, principal);
      const organization = await em.findOneOrFail(OrganizationSchema, principal.organizationId);
      assertAffordable(organization.creditsCents, { gpu: input.gpu, ...scaling, ...serving });
      await creation.assertNameFree(em, principal, input.name);
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
      const notices = modelCheck.status === 'unverified' ? [`The model check is unverified: ${modelCheck.reason}. The organization allows unverified models, so the deployment was created.`] : [];
      return { id: deployment.id, name: deployment.name, status: deployment.status, endpoint: deployment.endpoint, notices };
    },

    async update(em: EntityManager, principal: Principal, id: string, input: UpdateDeploymentInput | ReplaceDeploymentInput, replace: boolean) {
      if (input.model !== undefined) assertLoadableModel(input.model);
      return deploymentView(await changeDesiredState(deps.delivery, em, principal, id, async (deployment, tx) => {
        assertNotDeleting(deployment);
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
        const serving = await creation.settle(tx, principal, model, gpu, {
          gpusPerReplica: input.gpusPerReplica ?? (resized ? undefined : deployment.gpusPerReplica),
          contextLength: input.contextLength ?? (resized ? undefined : deployment.contextLength ?? undefined),
          dtype: input.dtype ?? (replace ? undefined : deployment.dtype),
          vllmArgs: input.vllmArgs ?? (replace ? undefined : deployment.vllmArgs),
        });
        const autoscaling = resolveAutoscaling('autoscaling' in input ? input.autoscaling : undefined, replace ? undefined : deployment.autoscaling);
        const next = { gpu, ...scaling, ...serving, autoscaling };
        if (hourlyCents(next) > hourlyCents(deployment)) await assertMayGrow(tx, principal, id, next);
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
      const changed = await changeDesiredState(deps.delivery, em, principal, id, async (deployment, tx) => {
        assertNotDeleting(deployment);
        switch (input.action) {
          case 'stop': deployment.running = false; break;
          case 'start':
            if (!deployment.running) await assertMayGrow(tx, principal, id, deployment);
            deployment.running = true;
            break;
          case 'restart': deployment.restarts += 1; break;
          case 'scale':
            if (input.replicas > deployment.replicas) await assertMayGrow(tx, principal, id, { ...deployment, replicas: input.replicas });
            notices.push(...widenBoundsFor(deployment, input.replicas));
            Object.assign(deployment, resolveScaling({ replicas: input.replicas }, deployment));
            deployment.replicaRequests += 1;
            break;
        }
      });
      return { ...deploymentView(changed), notices };
    },

    async remove(em: EntityManager, principal: Principal, id: string) {
      // A repeated DELETE changes nothing; it only sends again what was not delivered.
      const deployment = await changeDesiredState(deps.delivery, em, principal, id, (d) => {
        if (d.deleteRequested) return false;
        Object.assign(d, { deleteRequested: true, status: 'deleting' });
      });
      return { id: deployment.id, status: deployment.status };
    },
  };
}
