// What a deployment costs: now (the catalog's GPU prices), this month (replica-hours measured by Prometheus),
// per million tokens (what the last hour cost over the tokens it generated), and on every other GPU type that fits
// (the model fit rules).
import type { EntityManager } from '@mikro-orm/postgresql';
import { billableReplicas } from '../../catalog/billing.ts';
import { GPUS_PER_REPLICA_CHOICES, type Dtype } from '../../catalog/deployment-rules.ts';
import { exactHourlyCents, findGpuType, GPU_TYPES, hourlyCents, projectedCents, spentCents, type GpuType } from '../../catalog/gpu-types.ts';
import { choosePlacement } from '../../catalog/model-fit.ts';
import type { CatalogModel } from '../../catalog/models.ts';
import type { Principal } from '../auth/principal.ts';
import type { ClusterService } from '../clusters/service.ts';
import { DeploymentNotFoundError, ServiceUnavailableError } from '../core/errors.ts';
import { DeploymentSchema, type Deployment } from '../deployments/deployment.entity.ts';
import type { ModelService } from '../models/service.ts';
import type { PrometheusClient } from '../../lib/prometheus/client.ts';
import { periodSeconds, replicaHoursSince as measuredReplicaHours, spendResolutionSeconds } from '../../lib/prometheus/replica-hours.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';

/** The window a cost per million tokens is measured over, and the fewest tokens in it that make one meaningful. */
export const TOKEN_COST_WINDOW_SECONDS = 3600;
export const TOKEN_COST_MIN_TOKENS = 1000;

export function createCostService(deps: { prometheus: PrometheusClient; models: Pick<ModelService, 'facts'>; clusters: Pick<ClusterService, 'offeredGpuTypes'> }) {
  /** The same model, context and dtype on another GPU type: the fewest GPUs that hold it, by the fit rules or, without figures, by memory. */
  function alternative(deployment: Deployment, facts: CatalogModel | undefined, gpu: GpuType, replicas: number, now: number, offered: ReadonlySet<string>) {
    let gpusPerReplica: number | undefined;
    let reason: string;
    if (facts) {
      const choice = choosePlacement(facts, gpu, { contextLength: deployment.contextLength ?? undefined, dtype: deployment.dtype as Dtype });
      if ('problem' in choice) reason = choice.problem.message;
      else {
        gpusPerReplica = choice.gpusPerReplica;
        reason = `${gpusPerReplica} GPU(s) hold ${facts.id} with ${choice.contextLength} tokens of context`;
      }
    } else {
      // No figures for the model: as much GPU memory per replica as it has now.
      const needed = findGpuType(deployment.gpu)!.memoryGb * deployment.gpusPerReplica;
      gpusPerReplica = GPUS_PER_REPLICA_CHOICES.find((n) => n * gpu.memoryGb >= needed);
      reason = gpusPerReplica
        ? `${gpusPerReplica} GPU(s) give the ${needed} GB per replica it has now (Kiln has no figures for this model)`
        : `even ${GPUS_PER_REPLICA_CHOICES.at(-1)} GPUs give less than the ${needed} GB per replica it has now`;
    }
    const cost = gpusPerReplica ? hourlyCents({ gpu: gpu.id, replicas, gpusPerReplica }) : null;
    const available = offered.has(gpu.id);
    if (!available) reason = `${reason}; no GPU cluster you may use offers ${gpu.id} now`;
    return { gpu: gpu.id, fits: gpusPerReplica !== undefined, available, gpusPerReplica: gpusPerReplica ?? null, hourlyCents: cost, savingCents: cost === null ? null : now - cost, reason };
  }

  /** Replica-hours each deployment served from `since` to `at`, by name (lib/prometheus/replica-hours.ts). */
  const replicaHoursSince = (organizationId: string, name: string | undefined, since: Date, at: Date, step?: number) =>
    measuredReplicaHours(deps.prometheus, namespaceOf(organizationId), name, since, at, step);

  /** The model's figures (undefined when unknown, or the Hub cannot answer: memory decides then), and the deployment on every other GPU type. */
  async function alternativesOf(em: EntityManager, principal: Principal, deployment: Deployment, replicas: number, now: number) {
    let facts: CatalogModel | undefined;
    try {
      facts = await deps.models.facts(em, principal, deployment.model);
    } catch (error) {
      // A Hub that cannot answer leaves the figures unknown: memory decides instead.
      if (!(error instanceof ServiceUnavailableError)) throw error;
    }
    const offered = await deps.clusters.offeredGpuTypes(em, principal.organizationId);
    return { facts, alternatives: GPU_TYPES.filter((g) => g.id !== deployment.gpu).map((gpu) => alternative(deployment, facts, gpu, replicas, now, offered)) };
  }

  return {
    /** What the organization's live deployments spent in all from each of `sinces` to `at` (GET /v1/dashboard/metrics), one read of them. */
    async organizationSpendCents(em: EntityManager, principal: Principal, sinces: readonly Date[], at: Date): Promise<number[]> {
      // One resolution for all, the longest period's: today's spend is never more than the month's.
      const step = spendResolutionSeconds(Math.max(...sinces.map((since) => periodSeconds(since, at))));
      const [deployments, ...hours] = await Promise.all([
        em.find(DeploymentSchema, { organization: principal.organizationId, deletedAt: null }, { fields: ['id', 'name', 'gpu', 'gpusPerReplica'] }),
        ...sinces.map((since) => replicaHoursSince(principal.organizationId, undefined, since, at, step)),
      ]);
      return hours.map((byName) => deployments.reduce((sum, d) => sum + spentCents(d, byName.get(d.name) ?? 0), 0));
    },

    async deploymentPricing(em: EntityManager, principal: Principal, id: string) {
      const deployment = await em.findOne(DeploymentSchema, { id, organization: principal.organizationId, deletedAt: null });
      if (!deployment) throw new DeploymentNotFoundError(`Deployment ${id} not found`);
      // What runs and is charged now: the replicas the workflow last recorded, as billing counts them.
      const holding = billableReplicas(deployment.status, deployment.currentReplicas);
      const now = hourlyCents({ gpu: deployment.gpu, replicas: holding, gpusPerReplica: deployment.gpusPerReplica });

      const at = new Date();
      const monthStart = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
      const monthEnd = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
      const windowStart = new Date(at.getTime() - TOKEN_COST_WINDOW_SECONDS * 1000);
      const selector = `{namespace="${namespaceOf(principal.organizationId)}",deployment="${deployment.name}"}`;
      const [hours, windowHours, tokens] = await Promise.all([
        replicaHoursSince(principal.organizationId, deployment.name, monthStart, at),
        replicaHoursSince(principal.organizationId, deployment.name, windowStart, at),
        deps.prometheus.query(`sum(increase(vllm:generation_tokens_total${selector}[${TOKEN_COST_WINDOW_SECONDS}s]))`, at),
      ]);
      const replicaHours = hours.get(deployment.name) ?? 0;
      const spent = spentCents(deployment, replicaHours);
      const windowTokens = tokens[0] && Number.isFinite(tokens[0].value) ? Math.round(tokens[0].value) : 0;
      // The window's measured cost over its measured tokens; too few tokens say more about idle time than cost.
      const windowCents = exactHourlyCents({ gpu: deployment.gpu, gpusPerReplica: deployment.gpusPerReplica, replicas: windowHours.get(deployment.name) ?? 0 });
      const enough = windowTokens >= TOKEN_COST_MIN_TOKENS;

      const { alternatives } = await alternativesOf(em, principal, deployment, Math.max(holding, deployment.replicas), now);
      return {
        deploymentId: id, gpu: deployment.gpu, gpusPerReplica: deployment.gpusPerReplica, replicas: holding, hourlyCents: now,
        month: {
          start: monthStart.toISOString(), replicaHours, spentCents: spent,
          projectedCents: projectedCents(spent, now, at, monthEnd),
        },
        throughput: {
          windowSeconds: TOKEN_COST_WINDOW_SECONDS,
          generationTokens: windowTokens,
          generationTokensPerSecond: windowTokens === 0 ? null : Math.round((windowTokens / TOKEN_COST_WINDOW_SECONDS) * 100) / 100,
          minimumTokens: TOKEN_COST_MIN_TOKENS,
          costPerMillionTokensCents: enough ? Math.round((windowCents / windowTokens) * 1e6 * 100) / 100 : null,
          note: enough ? null : `Not enough traffic yet: ${windowTokens.toLocaleString('en-US')} tokens generated in the last hour; a cost per million tokens needs at least ${TOKEN_COST_MIN_TOKENS.toLocaleString('en-US')}.`,
        },
        alternatives,
      };
    },

    /**
     * The same deployment on every other GPU type (what GET /v1/deployments/{id}/pricing lists, and what the
     * optimization rules pick a cheaper or larger GPU from), with the model's figures they were sized by.
     */
    alternatives: (em: EntityManager, principal: Principal, deployment: Deployment) =>
      alternativesOf(em, principal, deployment, deployment.replicas, hourlyCents({ gpu: deployment.gpu, replicas: deployment.replicas, gpusPerReplica: deployment.gpusPerReplica })),
  };
}

export type CostService = ReturnType<typeof createCostService>;
