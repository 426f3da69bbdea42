// Comparing what a model, or a GPU requirement, costs on each provider's GPU offers (catalog/provider-prices.ts,
// a table taken from a public price catalog, each row with its source) and on Kiln's own GPU types (the
// catalog's price rule). A model is sized on each offer by the model fit rules. The cost per million tokens
// rests on throughput Kiln measured: the organization's own deployments of the model, read from Prometheus;
// where none ran on that GPU type, only the hourly price is known and the answer says so.
import type { EntityManager } from '@mikro-orm/postgresql';
import { findGpuType, GPU_TYPES, hourlyCents } from '../../catalog/gpu-types.ts';
import { DEFAULT_MIN_CONTEXT, describeFit, modelFit, smallestGpuCount } from '../../catalog/model-fit.ts';
import type { CatalogModel } from '../../catalog/models.ts';
import { PROVIDER_PRICES } from '../../catalog/provider-prices.ts';
import type { Principal } from '../auth/principal.ts';
import { invalidField, ServiceUnavailableError } from '../core/errors.ts';
import { DeploymentSchema } from '../deployments/deployment.entity.ts';
import type { ModelService } from '../models/service.ts';
import { PrometheusUnavailableError, type PrometheusClient } from '../../lib/prometheus/client.ts';
import { metricQueries } from '../../lib/prometheus/deployment-metrics.ts';
import { namespaceOf } from '../../workflows/contract/deployment.ts';
import type { CompareCostsInput } from './schemas.ts';

/** The window the organization's measured throughput is averaged over. */
export const THROUGHPUT_WINDOW_SECONDS = 3600;

/** One GPU offer as compared: a provider's instance type, or one of Kiln's GPU types. */
interface Offer {
  provider: string;
  instanceType: string;
  region: string | null;
  gpuName: string;
  gpuMemoryGb: number;
  /** GPUs the instance has; for Kiln's types, as many as the requirement or a replica needs. */
  gpuCount: number | null;
  hourlyUsd: number | null;
  kilnGpu: string | null;
  source: { repository: string | null; path: string; commit: string | null; date: string | null };
}

/** Generation throughput per replica one of the organization's deployments of the model had on a GPU type. */
interface Measured { deploymentId: string; gpu: string; gpusPerReplica: number; tokensPerSecondPerReplica: number }

const cents = (usd: number) => Math.round(usd * 100 * 100) / 100;

export function createProviderService(deps: { prometheus: PrometheusClient; models: Pick<ModelService, 'facts'> }) {
  /** The model's figures, or 422 naming `model` when Kiln cannot know them (no figures, or the Hub is away). */
  async function factsOf(em: EntityManager, principal: Principal, model: string): Promise<CatalogModel> {
    let facts: CatalogModel | undefined;
    try {
      facts = await deps.models.facts(em, principal, model);
    } catch (error) {
      if (error instanceof ServiceUnavailableError) throw invalidField('model', `Kiln cannot learn ${model}'s size now (${error.message}): give gpuMemoryGb instead`);
      throw error;
    }
    if (!facts) throw invalidField('model', `Kiln has no figures for ${model}'s size: give gpuMemoryGb instead`);
    return facts;
  }

  /** The organization's live deployments of `model` and the generation rate per ready replica each had over the window; none when Prometheus cannot say. */
  async function measured(em: EntityManager, principal: Principal, model: string): Promise<{ list: Measured[]; note: string | null }> {
    const deployments = await em.find(DeploymentSchema, { organization: principal.organizationId, model, deletedAt: null }, { fields: ['id', 'name', 'gpu', 'gpusPerReplica'] });
    if (!deployments.length) return { list: [], note: null };
    const q = metricQueries({ namespace: namespaceOf(principal.organizationId) }, THROUGHPUT_WINDOW_SECONDS);
    const at = new Date();
    try {
      const [tokens, ready] = await Promise.all([
        deps.prometheus.query(q.generationTokensPerSecond, at),
        deps.prometheus.query(`avg_over_time((${q.readyReplicas})[${THROUGHPUT_WINDOW_SECONDS}s:15s])`, at),
      ]);
      const value = (samples: typeof tokens, name: string) => samples.find((s) => s.labels.deployment === name)?.value;
      const list = deployments.flatMap((d) => {
        const rate = value(tokens, d.name);
        const replicas = value(ready, d.name);
        return rate !== undefined && replicas !== undefined && rate > 0 && replicas > 0
          ? [{ deploymentId: d.id, gpu: d.gpu, gpusPerReplica: d.gpusPerReplica, tokensPerSecondPerReplica: rate / replicas }] : [];
      });
      return { list, note: null };
    } catch (error) {
      if (error instanceof PrometheusUnavailableError) return { list: [], note: 'the metrics store (Prometheus) could not be read' };
      throw error;
    }
  }

  const offers = (): Offer[] => [
    ...PROVIDER_PRICES.map((row) => ({
      provider: row.provider, instanceType: row.instanceType, region: row.region, gpuName: row.gpuName, gpuMemoryGb: row.gpuMemoryGb, gpuCount: row.gpuCount,
      hourlyUsd: row.hourlyUsd, kilnGpu: row.kilnGpu, source: row.source,
    })),
    ...GPU_TYPES.map((gpu) => ({
      provider: 'kiln', instanceType: gpu.id, region: null, gpuName: gpu.name, gpuMemoryGb: gpu.memoryGb, gpuCount: null, hourlyUsd: null, kilnGpu: gpu.id,
      source: { repository: null, path: 'catalog/gpu-types.ts', commit: null, date: null, retrievedOn: null },
    })),
  ];

  return {
    /** POST /v1/providers/compare-costs */
    async compare(em: EntityManager, principal: Principal, input: CompareCostsInput) {
      if (input.model !== undefined && input.gpuMemoryGb !== undefined) throw invalidField('gpuMemoryGb', 'give a model or a GPU requirement, not both');
      if (input.model === undefined && input.gpuMemoryGb === undefined) throw invalidField('model', 'give a model, or a GPU requirement (gpuMemoryGb)');
      if (input.model === undefined && input.contextLength !== undefined) throw invalidField('contextLength', 'sizes a model: give model with it');
      if (input.model !== undefined && input.gpuCount !== undefined) throw invalidField('gpuCount', 'goes with gpuMemoryGb: a model is sized on each offer');

      if (input.gpuMemoryGb !== undefined) {
        const need = { memoryGb: input.gpuMemoryGb, count: input.gpuCount ?? 1 };
        const rows = offers().map((offer) => {
          const count = offer.gpuCount ?? need.count;
          const hourlyUsd = offer.hourlyUsd ?? hourlyCents({ gpu: offer.kilnGpu!, gpusPerReplica: count, replicas: 1 }) / 100;
          const fits = offer.gpuMemoryGb >= need.memoryGb && count >= need.count;
          const reason = fits
            ? `${count} GPU(s) of ${offer.gpuMemoryGb} GB meet ${need.count} of at least ${need.memoryGb} GB`
            : offer.gpuMemoryGb < need.memoryGb ? `${offer.gpuMemoryGb} GB a GPU is less than ${need.memoryGb} GB` : `${count} GPU(s), fewer than ${need.count}`;
          return {
            offer, count, fits, reason, replicasPerInstance: null, hourlyUsd, perMillionTokensCents: null, throughput: null,
            throughputNote: 'no model given: only the hourly price is known',
          };
        });
        return answer(rows, { model: null, contextLength: null, gpuMemoryGb: need.memoryGb, gpuCount: need.count });
      }

      const model = input.model!;
      const facts = await factsOf(em, principal, model);
      if (input.contextLength !== undefined && input.contextLength > facts.contextLength) {
        throw invalidField('contextLength', `${input.contextLength} tokens exceeds ${facts.id}'s context length of ${facts.contextLength}`);
      }
      // Sized as creation sizes a deployment that leaves the context length to Kiln (catalog/model-fit.ts choosePlacement).
      const contextLength = input.contextLength ?? Math.min(DEFAULT_MIN_CONTEXT, facts.contextLength);
      const throughput = await measured(em, principal, model);
      const rows = offers().map((offer) => {
        const perReplica = smallestGpuCount(facts, { memoryGb: offer.gpuMemoryGb }, contextLength);
        const count = offer.gpuCount ?? perReplica ?? 1;
        const hourlyUsd = offer.hourlyUsd ?? hourlyCents({ gpu: offer.kilnGpu!, gpusPerReplica: count, replicas: 1 }) / 100;
        const replicasPerInstance = perReplica === undefined ? 0 : Math.floor(count / perReplica);
        const fits = replicasPerInstance >= 1;
        const fitGpus = perReplica ?? count;
        const fit = modelFit({ model: facts, gpu: { memoryGb: offer.gpuMemoryGb }, gpuCount: fitGpus, contextLength });
        const reason = fits
          ? `${replicasPerInstance} replica(s) of ${perReplica} GPU(s): ${describeFit(fit, { gpuCount: fitGpus, contextLength })}`
          : perReplica === undefined ? `even 8 GPUs of ${offer.gpuMemoryGb} GB do not hold ${facts.id}` : `a replica needs ${perReplica} GPU(s); the instance has ${count}`;
        // Throughput measured on the same GPU type with replicas of the size this offer would hold.
        const best = fits ? throughput.list.filter((m) => m.gpu === offer.kilnGpu && m.gpusPerReplica === perReplica)
          .sort((a, b) => b.tokensPerSecondPerReplica - a.tokensPerSecondPerReplica)[0] : undefined;
        const tokensPerHour = best ? best.tokensPerSecondPerReplica * replicasPerInstance * 3600 : 0;
        return {
          offer, count, fits, reason, replicasPerInstance: fits ? replicasPerInstance : null, hourlyUsd,
          perMillionTokensCents: best ? Math.round(((cents(hourlyUsd) * 1e6) / tokensPerHour) * 100) / 100 : null,
          throughput: best ? { generationTokensPerSecondPerReplica: Math.round(best.tokensPerSecondPerReplica * 100) / 100, deploymentId: best.deploymentId, windowSeconds: THROUGHPUT_WINDOW_SECONDS } : null,
          throughputNote: best
            ? `measured: deployment ${best.deploymentId} of this model on ${findGpuType(best.gpu)!.name} generated this rate per replica over the last hour, at its load then`
            : !fits ? 'it does not hold the model'
              : throughput.note ?? `none measured: no deployment of the organization served ${model} on ${offer.kilnGpu ? `${findGpuType(offer.kilnGpu)!.name} with ${perReplica} GPU(s) a replica` : 'this GPU'} in the last hour; only the hourly price is known`,
        };
      });
      return answer(rows, { model, contextLength, gpuMemoryGb: null, gpuCount: null });
    },
  };
}

function answer(rows: Array<{
  offer: Offer; count: number; fits: boolean; reason: string; replicasPerInstance: number | null; hourlyUsd: number;
  perMillionTokensCents: number | null; throughput: { generationTokensPerSecondPerReplica: number; deploymentId: string; windowSeconds: number } | null; throughputNote: string;
}>, requirement: { model: string | null; contextLength: number | null; gpuMemoryGb: number | null; gpuCount: number | null }) {
  return {
    requirement,
    offers: rows.map((r) => ({
      provider: r.offer.provider, instanceType: r.offer.instanceType, region: r.offer.region,
      gpu: { name: r.offer.gpuName, memoryGb: r.offer.gpuMemoryGb, count: r.count }, kilnGpu: r.offer.kilnGpu,
      fits: r.fits, reason: r.reason, replicasPerInstance: r.replicasPerInstance,
      hourlyUsd: r.hourlyUsd, hourlyCents: cents(r.hourlyUsd), perMillionTokensCents: r.perMillionTokensCents,
      throughput: r.throughput, throughputNote: r.throughputNote, source: r.offer.source,
    })).sort((a, b) => Number(b.fits) - Number(a.fits) || a.hourlyCents - b.hourlyCents),
  };
}

export type ProviderService = ReturnType<typeof createProviderService>;
