// Models as the API offers them: the catalog shipped with Kiln (read-only), each organization's registry (the
// references it validated or deployed, with its own defaults) and, for Hugging Face models outside the
// catalog, the Hub's facts (cached in the registry row, or briefly in memory for a model no registry holds).
// Search, details with what each GPU type needs, validation of one placement, and the one fact lookup the
// deployments area uses. The figures come from catalog/model-fit.ts, which deployments use too.
import type { EntityManager } from '@mikro-orm/postgresql';
import { parseModelReference, vllmArgsProblem, type ModelReference } from '../../catalog/deployment-rules.ts';
import { findGpuType, GPU_TYPES, type GpuType } from '../../catalog/gpu-types.ts';
import { decodeTokensPerSecond, describeFit, modelFit, smallestGpuCount, type FitReport } from '../../catalog/model-fit.ts';
import { findCatalogModel, MODELS, VLLM_ARCHITECTURES, type CatalogModel } from '../../catalog/models.ts';
import { newId } from '../../lib/ids.ts';
import type { Principal } from '../auth/principal.ts';
import { ForbiddenError, invalidField, InUseError, NotFoundError, ServiceUnavailableError } from '../core/errors.ts';
import type { CursorCodec, Page } from '../core/pagination.ts';
import { isAllowed } from '../core/permissions.ts';
import { DeploymentSchema } from '../deployments/deployment.entity.ts';
import { OrganizationSecretSchema } from '../secrets/organization-secret.entity.ts';
import { isComplete, type HubClient } from './hub.ts';
import { assertLoadableModel } from './model-source.ts';
import { OrganizationModelSchema, type KnownFacts, type OrganizationModel } from './organization-model.entity.ts';
import type { MODEL_CHECKS, ModelViewBody, SearchModelsInput, UpdateModelInput, ValidateModelInput } from './schemas.ts';

/** A model's facts, as the catalog states them: what sizing a deployment needs. */
export type ModelFacts = CatalogModel;

const ORDERING = 'id';
/** Search's order (as String.localeCompare orders, without building a collator per comparison). */
const byId = new Intl.Collator().compare;
/** A registry row's Hub facts are asked for again after this long (a model's card or gating may change). */
const FACTS_TTL_MS = 24 * 3600_000;
/** Hub answers for models no registry holds (GET of a Hub model), kept this long, at most HUB_CACHE_SIZE of them. */
const HUB_CACHE_TTL_MS = 10 * 60_000;
const HUB_CACHE_SIZE = 500;
/**
 * Search reads an organization's registry once per this long in each API process, at most for
 * REGISTRY_CACHE_SIZE organizations: search runs on every keystroke of a form, and a query per request cost it
 * a third of its throughput (npm run bench). This process's own changes show at once; another replica's within it.
 */
const REGISTRY_CACHE_TTL_MS = 2000;
const REGISTRY_CACHE_SIZE = 1000;

export type ModelSource = 'catalog' | 'organization' | 'hub';

/** What a model reference is, the facts known of it and, for a registry entry, the organization's own fields. */
interface ResolvedModel {
  readonly id: string;
  readonly source: ModelSource;
  readonly reference: ModelReference;
  readonly facts: KnownFacts;
  readonly entry?: EntryFields;
}

/** A registry entry's own fields, as views show them (a row of search's query, or the entity). */
type EntryFields = Pick<OrganizationModel, 'reference' | 'displayName' | 'description' | 'defaultVllmArgs' | 'defaultContextLength' | 'facts'>;

/** The organization_model columns search reads, as Kysely sees them. */
interface OrganizationModelTable {
  organization_id: string; reference: string; display_name: string | null; description: string | null;
  default_vllm_args: string[]; default_context_length: number | null; facts: KnownFacts | null;
}

/** One model search may list: what its filters read, and its view, built only for the page answered. */
interface Candidate { id: string; text: string; facts: KnownFacts; view(): ModelViewBody }

type Check = { check: (typeof MODEL_CHECKS)[number]; passed: boolean | null; reason: string };

/** Where a reference is kept in the registry: Hub ids compare case-insensitively (as the Hub resolves them), revisions and storage paths exactly. */
export function modelKey(reference: ModelReference): string {
  if (reference.kind === 'huggingface') return `${reference.repo.toLowerCase()}${reference.revision ? `@${reference.revision}` : ''}`;
  return reference.kind === 'pvc' ? `pvc://${reference.claim}/${reference.path}` : `${reference.kind}://${reference.bucket}/${reference.path}`;
}

/** The reference as the registry shows it: hf:// left out, the rest as given. */
const canonical = (model: string) => model.replace(/^hf:\/\//, '');

/** The reference, checked (400 INVALID_MODEL) and taken apart. */
function parse(model: string): ModelReference {
  assertLoadableModel(model);
  return parseModelReference(model)!;
}

const catalogOf = (reference: ModelReference) => (reference.kind === 'huggingface' ? findCatalogModel(reference.repo) : undefined);

export function createModelService(deps: { cursors: CursorCodec; hub: HubClient }) {
  const hubCache = new Map<string, { facts: KnownFacts; at: number }>();
  const registryCache = new Map<string, { entries: Candidate[]; at: number }>();
  /** The organization's registry changed: its next search reads it afresh. */
  const changed = (organizationId: string) => registryCache.delete(organizationId);

  /** The Hub's facts for a Hub reference, through the short-lived cache. */
  async function askHub(reference: Extract<ModelReference, { kind: 'huggingface' }>): Promise<KnownFacts> {
    const key = modelKey(reference);
    const cached = hubCache.get(key);
    if (cached && Date.now() - cached.at < HUB_CACHE_TTL_MS) return cached.facts;
    const facts = await deps.hub.facts(reference.repo, reference.revision);
    hubCache.delete(key);
    hubCache.set(key, { facts, at: Date.now() });
    // Oldest first in a Map's order: drop it once there are too many.
    if (hubCache.size > HUB_CACHE_SIZE) hubCache.delete(hubCache.keys().next().value!);
    return facts;
  }

  const entryOf = (em: EntityManager, principal: Principal, reference: ModelReference) =>
    em.findOne(OrganizationModelSchema, { organization: principal.organizationId, referenceKey: modelKey(reference) });

  /** A registry entry's facts, refreshed from the Hub once stale; cached facts stand in while the Hub is away. */
  async function entryFacts(em: EntityManager, entry: OrganizationModel, reference: ModelReference): Promise<KnownFacts> {
    if (reference.kind !== 'huggingface') return {};
    const fresh = entry.facts && entry.factsFetchedAt && Date.now() - entry.factsFetchedAt.getTime() < FACTS_TTL_MS;
    if (fresh) return entry.facts!;
    try {
      entry.facts = await askHub(reference);
    } catch (error) {
      if (error instanceof ServiceUnavailableError && entry.facts) return entry.facts;
      throw error;
    }
    entry.factsFetchedAt = new Date();
    await em.flush();
    changed(entry.organization.id);
    return entry.facts;
  }

  /**
   * What `model` is: a catalog model (any revision of one), the organization's registry entry, or a Hub
   * model; 400 INVALID_MODEL when malformed, 404 when no one knows it, 503 when the Hub must be asked and
   * cannot answer.
   */
  async function resolve(em: EntityManager, principal: Principal, model: string, options: { unregistered?: boolean } = {}): Promise<ResolvedModel> {
    const reference = parse(model);
    const catalog = catalogOf(reference);
    if (catalog) return { id: catalog.id, source: 'catalog', reference, facts: catalog };
    const entry = await entryOf(em, principal, reference);
    if (entry) return { id: entry.reference, source: 'organization', reference, facts: await entryFacts(em, entry, reference), entry };
    if (reference.kind !== 'huggingface' && options.unregistered) return { id: canonical(model), source: 'organization', reference, facts: {} };
    if (reference.kind !== 'huggingface') throw new NotFoundError(`Model ${model} is neither in Kiln's catalog nor in your organization's models`);
    return { id: canonical(model), source: 'hub', reference, facts: await askHub(reference) };
  }

  /** A registry row's place in search: no request to the Hub, only what the row holds. */
  const entryView = (entry: EntryFields) => view({
    id: entry.reference, source: 'organization', reference: parseModelReference(entry.reference)!, facts: entry.facts ?? {}, entry,
  });

  function view(model: ResolvedModel): ModelViewBody {
    const { facts, entry } = model;
    return {
      id: model.id,
      source: model.source,
      displayName: entry?.displayName ?? facts.displayName ?? model.id,
      description: entry?.description ?? null,
      family: facts.family ?? null,
      task: facts.task ?? null,
      parametersBillion: facts.parametersBillion ?? null,
      architecture: facts.architecture ?? null,
      contextLength: facts.contextLength ?? null,
      layers: facts.layers ?? null,
      kvHeads: facts.kvHeads ?? null,
      headSize: facts.headSize ?? null,
      dtype: facts.dtype ?? null,
      license: facts.license ?? null,
      gated: facts.gated ?? null,
      defaultVllmArgs: entry?.defaultVllmArgs ?? [],
      defaultContextLength: entry?.defaultContextLength ?? null,
    };
  }

  function placement(model: ModelFacts, gpu: GpuType, contextLength: number) {
    const gpusPerReplica = smallestGpuCount(model, gpu, contextLength) ?? null;
    const [low, high] = gpusPerReplica ? decodeTokensPerSecond(model, gpu, gpusPerReplica) : [];
    return {
      gpu: gpu.id,
      contextLength,
      gpusPerReplica,
      hourlyPriceUsd: gpusPerReplica ? Math.round(gpu.hourlyPriceUsd * gpusPerReplica * 100) / 100 : null,
      tokensPerSecond: gpusPerReplica ? { low: low!, high: high! } : null,
    };
  }

  /** The organization's registry as search reads it: one query on the (organization, reference) index, cached briefly. */
  async function registryOf(em: EntityManager, organizationId: string): Promise<Candidate[]> {
    const cached = registryCache.get(organizationId);
    if (cached && Date.now() - cached.at < REGISTRY_CACHE_TTL_MS) return cached.entries;
    // Kysely, without the ORM's entities: several times cheaper for rows only read.
    const rows = await em.getKysely<{ organization_model: OrganizationModelTable }>().selectFrom('organization_model')
      .select(['reference', 'display_name', 'description', 'default_vllm_args', 'default_context_length', 'facts'])
      .where('organization_id', '=', organizationId)
      .execute();
    const entries = rows.map((row): Candidate => {
      const entry: EntryFields = {
        reference: row.reference, displayName: row.display_name, description: row.description,
        defaultVllmArgs: row.default_vllm_args, defaultContextLength: row.default_context_length, facts: row.facts,
      };
      const text = `${row.reference} ${row.display_name ?? ''} ${row.facts?.displayName ?? ''} ${row.facts?.family ?? ''}`.toLowerCase();
      return { id: row.reference, text, facts: row.facts ?? {}, view: () => entryView(entry) };
    });
    registryCache.delete(organizationId);
    registryCache.set(organizationId, { entries, at: Date.now() });
    if (registryCache.size > REGISTRY_CACHE_SIZE) registryCache.delete(registryCache.keys().next().value!);
    return entries;
  }

  /** The catalog as search reads it, built once. */
  const catalogCandidates: Candidate[] = MODELS.map((m) => ({
    id: m.id, text: `${m.id} ${m.displayName} ${m.family}`.toLowerCase(), facts: m,
    view: () => view({ id: m.id, source: 'catalog', reference: { kind: 'huggingface', repo: m.id }, facts: m }),
  }));

  const complete = (model: ResolvedModel): ModelFacts | undefined => (isComplete(model.facts) ? { ...model.facts, id: model.id } : undefined);

  /** The registry entry `model` names, for a change: 403 for a catalog model, 404 when the organization has none. */
  async function ownEntry(em: EntityManager, principal: Principal, model: string): Promise<OrganizationModel> {
    const reference = parse(model);
    const catalog = catalogOf(reference);
    if (catalog) throw new ForbiddenError(`Model ${catalog.id} is in Kiln's catalog, which organizations cannot change; deploy it with your own settings instead`);
    const entry = await entryOf(em, principal, reference);
    if (!entry) throw new NotFoundError(`Model ${model} is not in your organization's models`);
    return entry;
  }

    /**
   * Adds `model` to the organization's registry (idempotent: an entry already there is left as it is).
   * Catalog models, at any revision, stay the catalog's and join no registry. Asks the Hub nothing: facts
   * already looked up are kept with the entry.
   */
  async function remember(em: EntityManager, principal: Principal, model: string): Promise<void> {
    const reference = parse(model);
    if (catalogOf(reference)) return;
    const key = modelKey(reference);
    const known = reference.kind === 'huggingface' ? hubCache.get(key) : undefined;
    await em.createQueryBuilder(OrganizationModelSchema).insert({
      id: newId('mdl'), createdAt: new Date(), updatedAt: new Date(), organization: principal.organizationId,
      reference: canonical(model), referenceKey: key, displayName: null, description: null, defaultVllmArgs: [], defaultContextLength: null,
      facts: known?.facts ?? null, factsFetchedAt: known ? new Date(known.at) : null,
    }).onConflict(['organization', 'referenceKey']).ignore().execute();
    changed(principal.organizationId);
  }

  return {
    /**
     * A model's facts for sizing a deployment: the catalog's, else the registry's cached ones, else the Hub's
     * (then cached where the registry holds the model). undefined when they cannot be known (s3, gs and pvc
     * locations; a gated model whose config.json Kiln may not read). 400 INVALID_MODEL when malformed, 404
     * when the Hub does not have it, 503 ServiceUnavailableError when the Hub cannot be reached.
     */
    async facts(em: EntityManager, principal: Principal, model: string): Promise<ModelFacts | undefined> {
      const reference = parse(model);
      const catalog = catalogOf(reference);
      if (catalog) return catalog;
      const entry = await entryOf(em, principal, reference);
      if (entry) return complete({ id: entry.reference, source: 'organization', reference, facts: await entryFacts(em, entry, reference), entry });
      if (reference.kind !== 'huggingface') return undefined;
      return complete({ id: canonical(model), source: 'hub', reference, facts: await askHub(reference) });
    },

    remember,

    /**
     * What the organization set for the model (PATCH /v1/models/{id}): the vLLM arguments and context length a
     * deployment of it gets when its request leaves them out. None for models outside its registry.
     */
    async servingDefaults(em: EntityManager, principal: Principal, model: string): Promise<{ vllmArgs?: string[]; contextLength?: number }> {
      const entry = await entryOf(em, principal, parse(model));
      return {
        ...(entry?.defaultVllmArgs.length ? { vllmArgs: entry.defaultVllmArgs } : {}),
        ...(entry?.defaultContextLength ? { contextLength: entry.defaultContextLength } : {}),
      };
    },

    /** Catalog models and the organization's, by id, in cursor pages: the registry is one indexed query. */
    async search(em: EntityManager, principal: Principal, query: SearchModelsInput): Promise<Page<ModelViewBody>> {
      const words = query.q?.toLowerCase().split(/\s+/).filter(Boolean) ?? [];
      const fitsOn = query.fitsGpu ? findGpuType(query.fitsGpu)! : undefined;
      const after = query.cursor ? (JSON.parse(deps.cursors.decode(query.cursor, ORDERING)) as string) : undefined;
      const matching = [...catalogCandidates, ...await registryOf(em, principal.organizationId)]
        .filter((m) => after === undefined || byId(m.id, after) > 0)
        .filter((m) => words.every((word) => m.text.includes(word)))
        // A filter on a fact excludes the models whose fact is unknown.
        .filter(({ facts: f }) => !query.task || f.task === query.task)
        .filter(({ facts: f }) => query.minParamsB === undefined || (f.parametersBillion !== undefined && f.parametersBillion >= query.minParamsB))
        .filter(({ facts: f }) => query.maxParamsB === undefined || (f.parametersBillion !== undefined && f.parametersBillion <= query.maxParamsB))
        .filter(({ facts: f }) => !query.license || f.license === query.license)
        .filter(({ facts: f }) => query.gated === undefined || f.gated === query.gated)
        .filter(({ facts: f }) => !fitsOn || (isComplete(f) && smallestGpuCount(f, fitsOn, Math.min(query.contextLength ?? f.contextLength, f.contextLength)) !== undefined))
        .sort((a, b) => byId(a.id, b.id));
      return deps.cursors.page(matching.slice(0, query.limit + 1).map((m) => m.view()), query.limit, ORDERING, (last) => last.id);
    },

    async details(em: EntityManager, principal: Principal, id: string, contextLength?: number) {
      const model = await resolve(em, principal, id);
      const facts = complete(model);
      if (!facts) return { ...view(model), hardware: [] };
      const tokens = Math.min(contextLength ?? model.entry?.defaultContextLength ?? facts.contextLength, facts.contextLength);
      return { ...view(model), hardware: GPU_TYPES.map((gpu) => placement(facts, gpu, tokens)) };
    },

    /**
     * The checks of one placement. A caller who may change the organization's models (models:write) adds a
     * model outside the catalog to its registry by validating it; anyone else's validation changes nothing.
     */
    async validate(em: EntityManager, principal: Principal, id: string, input: ValidateModelInput) {
      const model = await resolve(em, principal, id, { unregistered: true });
      const gpu = findGpuType(input.gpu)!;
      const facts = complete(model);
      const contextLength = input.contextLength ?? model.entry?.defaultContextLength ?? model.facts.contextLength ?? null;
      const memory: FitReport | null = facts && contextLength ? modelFit({ model: facts, gpu, gpuCount: input.gpusPerReplica, contextLength }) : null;
      const unknown = model.reference.kind === 'huggingface'
        ? 'the Hugging Face Hub does not show it (a gated model\'s config.json needs KILN_HF_TOKEN)'
        : `Kiln cannot read the files of ${model.reference.kind}:// locations before a deployment starts`;
      const { architecture, gated, contextLength: ownLength } = model.facts;
      const checks: Check[] = [
        { check: 'source', passed: true, reason: sourceReason(model) },
        architecture === undefined ? { check: 'architecture', passed: null, reason: `the architecture is unknown: ${unknown}` }
          : VLLM_ARCHITECTURES.includes(architecture)
            ? { check: 'architecture', passed: true, reason: `vLLM serves ${architecture}` }
            : { check: 'architecture', passed: false, reason: `vLLM does not serve ${architecture}` },
        contextLength === null || ownLength === undefined
          ? { check: 'context_length', passed: null, reason: `the model's context length is unknown: ${unknown}` }
          : contextLength <= ownLength
            ? { check: 'context_length', passed: true, reason: `${contextLength} tokens is within the model's ${ownLength}` }
            : { check: 'context_length', passed: false, reason: `${contextLength} tokens exceeds the model's ${ownLength}` },
        memory
          ? { check: 'memory', passed: memory.fits, reason: `${gpu.name}: ${describeFit(memory, { gpuCount: input.gpusPerReplica, contextLength: contextLength! })}` }
          : { check: 'memory', passed: null, reason: `the model's size and shape are unknown, so Kiln cannot tell whether it fits: ${unknown}` },
        gated === undefined || model.reference.kind !== 'huggingface'
          ? { check: 'gated_token', passed: true, reason: 'not a Hugging Face Hub model: no Hugging Face token is needed' }
          : gated
            ? await gatedTokenCheck(em, principal)
            : { check: 'gated_token', passed: true, reason: 'the model is not gated: no Hugging Face token is needed' },
      ];
      if (!model.entry && model.source !== 'catalog' && isAllowed('models:write', principal.permissions, principal.scope)) await remember(em, principal, id);
      return {
        model: model.id, gpu: gpu.id, gpusPerReplica: input.gpusPerReplica, contextLength,
        valid: checks.every((c) => c.passed !== false), checks, memory,
      };
    },

    /** PATCH: the organization's own fields of a registry entry. */
    async update(em: EntityManager, principal: Principal, id: string, input: UpdateModelInput) {
      const entry = await ownEntry(em, principal, id);
      const argsProblem = input.defaultVllmArgs && vllmArgsProblem(input.defaultVllmArgs);
      if (argsProblem) throw invalidField('defaultVllmArgs', argsProblem);
      const ownLength = entry.facts?.contextLength;
      if (input.defaultContextLength && ownLength && input.defaultContextLength > ownLength) {
        throw invalidField('defaultContextLength', `must be at most the model's context length, ${ownLength} tokens`);
      }
      if (input.displayName !== undefined) entry.displayName = input.displayName;
      if (input.description !== undefined) entry.description = input.description;
      if (input.defaultVllmArgs !== undefined) entry.defaultVllmArgs = input.defaultVllmArgs;
      if (input.defaultContextLength !== undefined) entry.defaultContextLength = input.defaultContextLength;
      await em.flush();
      changed(principal.organizationId);
      return entryView(entry);
    },

    /** DELETE: 409 while a live deployment of the organization runs the model. */
    async remove(em: EntityManager, principal: Principal, id: string) {
      const entry = await ownEntry(em, principal, id);
      const live = await em.find(DeploymentSchema, { organization: principal.organizationId, deletedAt: null, deleteRequested: false }, { fields: ['id', 'name', 'model'] });
      const users = live.filter((d) => modelKey(parseModelReference(d.model) ?? { kind: 'huggingface', repo: d.model }) === entry.referenceKey);
      if (users.length) {
        throw new InUseError(`Model ${entry.reference} is used by ${users.length} deployment(s) (${users.map((d) => d.name).join(', ')}): delete them first`, {
          deployments: users.map((d) => d.id),
        });
      }
      em.remove(entry);
      await em.flush();
      changed(principal.organizationId);
      return { id: entry.reference, deleted: true as const };
    },
  };
}

function sourceReason(model: ResolvedModel): string {
  const ref = model.reference;
  switch (ref.kind) {
    case 'huggingface': return model.source === 'catalog'
      ? `${model.id} is a Hugging Face model in Kiln's catalog`
      : `${ref.repo}${ref.revision ? ` at revision ${ref.revision}` : ''} is on the Hugging Face Hub, which answered for it`;
    case 'pvc': return `pvc://${ref.claim}/${ref.path} is well formed: the replicas mount the PersistentVolumeClaim ${ref.claim}, which Kiln checks only when they start`;
    default: return `${model.id} is well formed: the replicas read it from ${ref.kind === 's3' ? 'Amazon S3' : 'Google Cloud Storage'} when they start, which Kiln cannot check beforehand`;
  }
}

export type ModelService = ReturnType<typeof createModelService>;

/**
 * A gated model downloads only with a Hugging Face token: the organization's newest token secret, named with how
 * a deployment mounts it (whether this deployment will is its own business, so the check is open), or how to make one.
 */
async function gatedTokenCheck(em: EntityManager, principal: Principal): Promise<Check> {
  const [token] = await em.find(OrganizationSecretSchema, { organization: principal.organizationId, type: 'huggingface_token' }, { orderBy: { createdAt: 'desc' }, limit: 1 });
  if (!token) {
    return {
      check: 'gated_token', passed: false,
      reason: 'the Hugging Face Hub gates this model: store a Hugging Face token with POST /v1/secrets ({"type":"huggingface_token",...}), then mount it in the deployment as secrets: [{"name":"HF_TOKEN","secretId":"<its id>"}]',
    };
  }
  return {
    check: 'gated_token', passed: null,
    reason: `the Hugging Face Hub gates this model: mount the organization's token secret "${token.name}" in the deployment as secrets: [{"name":"HF_TOKEN","secretId":"${token.id}"}]`,
  };
}
