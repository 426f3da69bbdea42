// GPU clusters: platform infrastructure shared by every organization, managed by platform administrators,
// and an organization's own `kubernetes` clusters (registered through /v1/onboarding/providers), which only
// it sees and is placed on. A `kubernetes` cluster is registered by kubeconfig: Kiln reaches its API and
// reads the GPUs its nodes offer, and it is ready at once. An `aws` cluster is built by its workflow (the
// gpu-cluster stack), and so are a `local` cluster's GPU nodes (its node pools, on the control plane its
// kubeconfig reaches); the desired state is committed first, then sent. `place` picks the cluster that serves a
// new deployment: the organization's own first, then the shared ones.
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { nodeGroupsProblem, type NodeGroup } from '../../catalog/node-groups.ts';
import { nodePoolsProblem, type NodePool } from '../../catalog/node-pools.ts';
import { kubeApi, kubeApiFromKubeconfig, parseKubeconfig, type KubeApi } from '../../lib/kubernetes/api.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { newId } from '../../lib/ids.ts';
import { DeploymentSchema, LIVE_STATUSES } from '../deployments/deployment.entity.ts';
import { ConflictError, GpuUnavailableError, NotFoundError, invalidField } from '../core/errors.ts';
import { BACKGROUND_DEADLINE_MS } from '../core/workflow-calls.ts';
import { circuitForOrganizations, type CircuitService } from '../recovery/circuits.ts';
import { circuitProviderOf, GpuClusterSchema, type AwsClusterSpec, type ClusterGpus, type GpuClusterRecord, type LocalClusterSpec } from './gpu-cluster.entity.ts';
import { clusterDelivery } from './delivery.ts';
import type { ClusterOrchestrator } from './orchestrator.ts';
import { readClusterGpus, readFreeGpusPerNode } from './nodes.ts';
import type { ClusterViewBody, CreateClusterInput, UpdateClusterInput } from './schemas.ts';

export interface ClusterServiceDeps {
  secrets: SecretBox;
  orchestrator: Pick<ClusterOrchestrator, 'converge'>;
  circuits: Pick<CircuitService, 'refusing'>;
  log: Pick<Logger, 'error' | 'info'>;
}

export interface ClusterInferenceAccess {
  readonly clusterId: string;
  readonly gatewayUrl: string | null;
  /** Unsealed; null for a cluster that has none yet (an aws cluster still provisioning). */
  readonly kubeconfig: string | null;
}

/** A registration must not hold a request for long: an unreachable API server fails it after this. */
const KUBE_API_TIMEOUT_MS = 10_000;
/** A dry run waits no longer than this for a cluster's nodes and pods. */
const CAPACITY_TIMEOUT_MS = 5_000;

/** How many replicas of a size fit now on one cluster (the dry run's capacity check). */
export interface ClusterCapacity {
  readonly clusterId: string;
  readonly name: string;
  readonly gpusFree: number;
  readonly replicasFit: number;
  /** `nodes`: read from the cluster now; `records`: what it offers less what Kiln's deployments hold. */
  readonly measuredFrom: 'nodes' | 'records';
  readonly note: string | null;
}

/** Clusters that can take deployments. */
const SERVING = ['ready', 'scaling'] as const;

export function createClusterService(deps: ClusterServiceDeps) {
  const delivery = clusterDelivery(deps);
  async function find(em: EntityManager, id: string): Promise<GpuClusterRecord> {
    const cluster = await em.findOne(GpuClusterSchema, { id, deletedAt: null });
    if (!cluster) throw new NotFoundError(`GPU cluster ${id} not found`);
    return cluster;
  }

  /** Sends the committed change; one Temporal could not take now stays saved for the redelivery loop (clusters/delivery.ts). */
  async function converge(em: EntityManager, cluster: GpuClusterRecord): Promise<void> {
    await delivery.send(em, cluster);
  }

  async function flushNamed(em: EntityManager, name: string): Promise<void> {
    await em.flush().catch((error: unknown) => {
      if (error instanceof Error && error.name === 'UniqueConstraintViolationException') throw nameTaken(name);
      throw error;
    });
  }

  /** Unsealed; null for a cluster that has none yet. */
  const kubeconfigOf = (cluster: Pick<GpuClusterRecord, 'sealedKubeconfig'>): string | null => (cluster.sealedKubeconfig ? deps.secrets.open(cluster.sealedKubeconfig) : null);

  return {
    async list(em: EntityManager) {
      const clusters = await em.find(GpuClusterSchema, { deletedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
      const inUse = await gpusInUse(em, clusters.map((c) => c.id));
      return clusters.map((c) => view(c, inUse.get(c.id)));
    },

    get: async (em: EntityManager, id: string) => viewInUse(em, await find(em, id)),

    /**
     * `organizationId`: the organization whose own cluster it becomes (a `kubernetes` one only); absent: a
     * shared cluster. Names are unique among the shared clusters and within each organization's own.
     */
    async create(em: EntityManager, input: CreateClusterInput, owner: { organizationId?: string } = {}) {
      const organization = owner.organizationId ?? null;
      if (organization && input.provider !== 'kubernetes') throw invalidField('provider', 'an organization registers its own clusters by kubeconfig (kubernetes)');
      if (await em.count(GpuClusterSchema, { name: input.name, organization, deletedAt: null })) throw nameTaken(input.name);
      const base = { id: newId('clu'), organization, name: input.name, provider: input.provider, gatewayUrl: input.gatewayUrl ?? null, createdAt: new Date() };
      if (input.provider === 'kubernetes') {
        const gpus = await inspect(input.kubeconfig);
        const cluster = em.create(GpuClusterSchema, { ...base, status: 'ready', sealedKubeconfig: deps.secrets.seal(input.kubeconfig), gpus });
        await flushNamed(em, input.name);
        return view(cluster);
      }
      let cluster;
      if (input.provider === 'local') {
        checkNodePools(input.nodePools);
        // Reached now, so a kubeconfig that cannot work is refused here rather than failing the workflow.
        await inspect(input.kubeconfig);
        cluster = em.create(GpuClusterSchema, {
          ...base, status: 'provisioning', gpus: [], sealedKubeconfig: deps.secrets.seal(input.kubeconfig), spec: { nodePools: input.nodePools },
        });
      } else {
        checkNodeGroups(input.nodeGroups);
        cluster = em.create(GpuClusterSchema, {
          ...base, status: 'provisioning', gpus: [],
          spec: { region: input.region, subnetIds: input.subnetIds, kubernetesVersion: input.kubernetesVersion, nodeGroups: input.nodeGroups },
        });
      }
      await flushNamed(em, input.name);
      await converge(em, cluster);
      return view(cluster);
    },

    async update(em: EntityManager, id: string, input: UpdateClusterInput) {
      const cluster = await find(em, id);
      if (cluster.deleteRequested) throw new ConflictError(`GPU cluster ${id} is being deleted`, { field: 'id' });
      if (input.kubeconfig !== undefined && cluster.provider !== 'kubernetes') throw invalidField('kubeconfig', 'only a kubernetes cluster takes a kubeconfig; an aws cluster\'s comes from its stack');
      if (input.nodeGroups !== undefined && cluster.provider !== 'aws') throw invalidField('nodeGroups', 'only an aws cluster has node groups Kiln can scale');
      if (input.nodePools !== undefined && cluster.provider !== 'local') throw invalidField('nodePools', 'only a local cluster has node pools');
      if (input.name !== undefined && input.name !== cluster.name && await em.count(GpuClusterSchema, { name: input.name, organization: cluster.organization?.id ?? null, deletedAt: null })) throw nameTaken(input.name);
      if (input.name !== undefined) cluster.name = input.name;
      if (input.gatewayUrl !== undefined) cluster.gatewayUrl = input.gatewayUrl;
      if (cluster.provider === 'kubernetes') {
        // Any PATCH reads the GPUs again: with the new kubeconfig, or the one kept (a cluster recorded without
        // one keeps the GPUs it was recorded with).
        const kubeconfig = input.kubeconfig ?? kubeconfigOf(cluster);
        if (kubeconfig !== null) {
          cluster.gpus = await inspect(kubeconfig);
          cluster.sealedKubeconfig = deps.secrets.seal(kubeconfig);
        }
        await flushNamed(em, cluster.name);
        return viewInUse(em, cluster);
      }
      // New node groups or pools scale the stack; any PATCH of a failed cluster tries its stack again.
      const resized = input.nodeGroups ?? input.nodePools;
      const rollout = resized !== undefined || cluster.status === 'failed';
      if (input.nodeGroups !== undefined) {
        checkNodeGroups(input.nodeGroups);
        cluster.spec = { ...cluster.spec as AwsClusterSpec, nodeGroups: input.nodeGroups };
      }
      if (input.nodePools !== undefined) {
        checkNodePools(input.nodePools);
        cluster.spec = { nodePools: input.nodePools };
      }
      if (resized !== undefined && cluster.status === 'ready') cluster.status = 'scaling';
      if (rollout) cluster.generation += 1;
      await flushNamed(em, cluster.name);
      if (rollout) await converge(em, cluster);
      return viewInUse(em, cluster);
    },

    async remove(em: EntityManager, id: string) {
      const cluster = await find(em, id);
      const serving = await em.count(DeploymentSchema, { cluster: id, deletedAt: null });
      if (serving) throw new ConflictError(`GPU cluster ${id} still serves ${serving} deployment(s); delete them first`, { field: 'id' });
      // Serving none, it holds no GPUs: its view needs no count of them.
      if (cluster.provider === 'kubernetes') {
        // Kiln did not make it, so it only forgets it.
        Object.assign(cluster, { status: 'deleted', deletedAt: new Date(), sealedKubeconfig: null });
        await em.flush();
        return view(cluster);
      }
      // A second DELETE after a failed teardown tries it again.
      if (!cluster.deleteRequested || cluster.status === 'failed') Object.assign(cluster, { deleteRequested: true, status: 'deleting', generation: cluster.generation + 1 });
      await em.flush();
      await converge(em, cluster);
      return view(cluster);
    },

    /** How inference reaches a cluster's deployments: through the gateway it names, else to the pods found with its kubeconfig. */
    inferenceAccess(cluster: Pick<GpuClusterRecord, 'id' | 'gatewayUrl' | 'sealedKubeconfig'>): ClusterInferenceAccess {
      return { clusterId: cluster.id, gatewayUrl: cluster.gatewayUrl ?? null, kubeconfig: kubeconfigOf(cluster) };
    },

    /**
     * The cluster's Kubernetes API, reached with its kubeconfig (pods' logs); null while it has none (an aws
     * cluster still provisioning). Throws when the stored kubeconfig cannot be read.
     */
    kubernetesApi(cluster: GpuClusterRecord, options: { timeoutMs?: number } = {}): KubeApi | null {
      const kubeconfig = kubeconfigOf(cluster);
      return kubeconfig === null ? null : kubeApiFromKubeconfig(kubeconfig, { ...options, source: `the kubeconfig of GPU cluster ${cluster.name}` });
    },

    /** The clusters an organization may be placed on, its own first (oldest first within each), serving or not. */
    async available(em: EntityManager, organizationId: string): Promise<GpuClusterRecord[]> {
      const clusters = await em.find(GpuClusterSchema, { ...usableBy(organizationId), deletedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
      return [...clusters.filter((c) => c.organization), ...clusters.filter((c) => !c.organization)];
    },

    /**
     * How many replicas of `gpusPerReplica` GPUs of `gpuType` fit now on each serving cluster the organization
     * may use that offers the type, in placement's order. Read from the cluster's nodes (each node's allocatable
     * GPUs less what its pods request; a replica's GPUs all on one node); for a cluster Kiln cannot read, from its
     * record less what Kiln's deployments hold there.
     */
    async capacity(em: EntityManager, organizationId: string, gpuType: string, gpusPerReplica: number): Promise<ClusterCapacity[]> {
      const offering = await offeringInPlacementOrder(em, organizationId, gpuType);
      const inUse = await gpusInUse(em, offering.map((c) => c.id));
      return Promise.all(offering.map(async (cluster): Promise<ClusterCapacity> => {
        const base = { clusterId: cluster.id, name: cluster.name };
        let note: string;
        try {
          const kubeconfig = kubeconfigOf(cluster);
          if (kubeconfig !== null) {
            const perNode = await readFreeGpusPerNode(kubeApiFromKubeconfig(kubeconfig, { timeoutMs: CAPACITY_TIMEOUT_MS, source: `the kubeconfig of GPU cluster ${cluster.name}` }), gpuType);
            return {
              ...base, measuredFrom: 'nodes', note: null,
              gpusFree: perNode.reduce((a, b) => a + b, 0), replicasFit: perNode.reduce((sum, free) => sum + Math.floor(free / gpusPerReplica), 0),
            };
          }
          note = 'Kiln has no kubeconfig for it yet: counted from its record';
        } catch (error) {
          note = `its nodes could not be read (${(error as Error).message.slice(0, 200)}): counted from its record`;
        }
        const gpusFree = Math.max(0, offered(cluster, gpuType) - (inUse.get(cluster.id)?.get(gpuType) ?? 0));
        return { ...base, measuredFrom: 'records', note, gpusFree, replicasFit: Math.floor(gpusFree / gpusPerReplica) };
      }));
    },

    /** GPU types some serving cluster the organization may use offers (GET /v1/gpu-types `available`). */
    async offeredGpuTypes(em: EntityManager, organizationId: string): Promise<Set<string>> {
      const clusters = await em.find(GpuClusterSchema, { ...usableBy(organizationId), status: { $in: [...SERVING] }, deletedAt: null, deleteRequested: false });
      return new Set(clusters.flatMap((c) => c.gpus.filter((g) => g.count > 0).map((g) => g.gpuType)));
    },

    /** 503 GPU_UNAVAILABLE unless the cluster serving a deployment offers the GPU type it is changed to. */
    async assertOffers(em: EntityManager, clusterId: string, gpuType: string): Promise<void> {
      const cluster = await em.findOneOrFail(GpuClusterSchema, clusterId);
      if (offered(cluster, gpuType) > 0) return;
      throw new GpuUnavailableError(`GPU cluster ${cluster.name}, which serves this deployment, does not offer ${gpuType}`, { gpu: gpuType });
    },

    /**
     * The cluster that will serve an organization's new deployment of this GPU type: a ready one offering it
     * (the organization's own clusters before the shared ones, then the most GPUs of the type first) whose
     * provider's circuit for the type lets attempts through; never another organization's own cluster. 503
     * GPU_UNAVAILABLE otherwise, naming the open circuit and when it half-opens.
     */
    async place(em: EntityManager, organizationId: string, gpuType: string): Promise<GpuClusterRecord> {
      const offering = await offeringInPlacementOrder(em, organizationId, gpuType);
      if (!offering.length) throw new GpuUnavailableError(`No GPU cluster offers ${gpuType} at the moment`, { gpu: gpuType });
      let refusing;
      for (const cluster of offering) {
        refusing = await deps.circuits.refusing(em, { provider: circuitProviderOf(cluster), gpuType });
        if (!refusing) return cluster;
      }
      const halfOpensAt = refusing!.halfOpensAt ? new Date(refusing!.halfOpensAt) : undefined;
      const when = refusing!.state === 'open' ? `it half-opens at ${refusing!.halfOpensAt}` : 'it is half-open and its trial attempt is under way';
      throw new GpuUnavailableError(
        `${gpuType} is unavailable: the ${refusing!.provider}/${gpuType} provisioning circuit is ${refusing!.state} after ${refusing!.failures} failed attempts; ${when}`,
        { gpu: gpuType, circuit: circuitForOrganizations(refusing!) },
        halfOpensAt ? { 'Retry-After': String(Math.max(1, Math.ceil((halfOpensAt.getTime() - Date.now()) / 1000))) } : {},
      );
    },
  };
}

/** Reaches the cluster's API with the kubeconfig and reads what its nodes offer (422 naming kubeconfig when it cannot). */
async function inspect(kubeconfig: string): Promise<ClusterGpus[]> {
  let credentials;
  try {
    credentials = parseKubeconfig(kubeconfig);
  } catch (error) {
    throw invalidField('kubeconfig', (error as Error).message);
  }
  return readClusterGpus(kubeApi(credentials, { timeoutMs: KUBE_API_TIMEOUT_MS })).catch((error: unknown) => {
    throw invalidField('kubeconfig', `could not read the cluster's nodes: ${(error as Error).message}`.slice(0, 500));
  });
}

/**
 * `npm start`: registers the cluster it runs beside under `name`, or brings that record up to date (new
 * kubeconfig, GPUs read again), so a fresh start can take deployments.
 */
export async function syncKubernetesCluster(em: EntityManager, secrets: SecretBox, name: string, kubeconfig: string): Promise<ClusterViewBody> {
  const gpus = await inspect(kubeconfig);
  const existing = await em.findOne(GpuClusterSchema, { name, organization: null, deletedAt: null });
  const cluster = existing ?? em.create(GpuClusterSchema, { id: newId('clu'), name, provider: 'kubernetes', status: 'ready', gpus, createdAt: new Date() });
  if (cluster.provider !== 'kubernetes') throw new ConflictError(`GPU cluster ${name} is an ${cluster.provider} cluster`, { field: 'name' });
  Object.assign(cluster, { gpus, sealedKubeconfig: secrets.seal(kubeconfig) });
  await em.flush();
  return viewInUse(em, cluster);
}

/**
 * `npm start`: registers the local cluster it started as a `local` cluster whose GPU nodes are `nodePools` (a
 * `kubernetes` record of an earlier start becomes one), keeping the pools of one already registered (an
 * administrator may have changed them), and sends its workflow the desired state: a workflow that has applied it
 * ignores it, one lost with Temporal's data applies it again. A failed cluster's stack is tried again.
 */
export async function syncLocalCluster(
  em: EntityManager, deps: Pick<ClusterServiceDeps, 'secrets' | 'orchestrator'>, name: string, kubeconfig: string, nodePools: readonly NodePool[],
): Promise<GpuClusterRecord> {
  checkNodePools(nodePools);
  await inspect(kubeconfig);
  const existing = await em.findOne(GpuClusterSchema, { name, organization: null, deletedAt: null });
  if (existing && existing.provider === 'aws') throw new ConflictError(`GPU cluster ${name} is an aws cluster`, { field: 'name' });
  const cluster = existing ?? em.create(GpuClusterSchema, { id: newId('clu'), name, provider: 'local', status: 'provisioning', gpus: [], spec: { nodePools }, createdAt: new Date() });
  if (cluster.provider === 'kubernetes') Object.assign(cluster, { provider: 'local', status: 'provisioning', spec: { nodePools } });
  if (cluster.status === 'failed') Object.assign(cluster, { status: 'scaling', generation: cluster.generation + 1 });
  cluster.sealedKubeconfig = deps.secrets.seal(kubeconfig);
  await em.flush();
  await deps.orchestrator.converge(cluster, BACKGROUND_DEADLINE_MS);
  await em.nativeUpdate(GpuClusterSchema, { id: cluster.id, sentGeneration: { $lt: cluster.generation } }, { sentGeneration: cluster.generation });
  return cluster;
}

/**
 * The GPUs each cluster's deployments hold, per GPU type: replicas x GPUs per replica of those not deleted
 * whose status holds GPUs (LIVE_STATUSES, the rule the admin revenue's GPU run rate counts by).
 */
async function gpusInUse(em: EntityManager, clusterIds: readonly string[]): Promise<Map<string, Map<string, number>>> {
  const inUse = new Map<string, Map<string, number>>();
  if (!clusterIds.length) return inUse;
  const rows = await em.getKysely<{ deployment: { cluster_id: string | null; gpu: string; replicas: number; gpus_per_replica: number; status: string; deleted_at: Date | null } }>()
    .selectFrom('deployment').select(['cluster_id', 'gpu', sql<number>`sum(replicas * gpus_per_replica)::int`.as('gpus')])
    .where('cluster_id', 'in', [...clusterIds]).where('deleted_at', 'is', null).where('status', 'in', [...LIVE_STATUSES])
    .groupBy(['cluster_id', 'gpu']).execute();
  for (const row of rows) {
    const cluster = inUse.get(row.cluster_id!) ?? new Map<string, number>();
    inUse.set(row.cluster_id!, cluster.set(row.gpu, Number(row.gpus)));
  }
  return inUse;
}

async function viewInUse(em: EntityManager, cluster: GpuClusterRecord): Promise<ClusterViewBody> {
  return view(cluster, (await gpusInUse(em, [cluster.id])).get(cluster.id));
}

/**
 * The serving clusters an organization may use that offer a GPU type, in the order placement tries them: its
 * own before the shared ones, then the most GPUs of the type first. Filtered explicitly, not left to row-level
 * security: the service role key and the worker bypass it.
 */
async function offeringInPlacementOrder(em: EntityManager, organizationId: string, gpuType: string): Promise<GpuClusterRecord[]> {
  const clusters = await em.find(GpuClusterSchema, { ...usableBy(organizationId), status: { $in: [...SERVING] }, deletedAt: null, deleteRequested: false }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  const own = (c: GpuClusterRecord) => (c.organization ? 0 : 1);
  return clusters.filter((c) => offered(c, gpuType) > 0).sort((a, b) => own(a) - own(b) || offered(b, gpuType) - offered(a, gpuType));
}

/** The shared clusters and the organization's own. */
function usableBy(organizationId: string) {
  return { $or: [{ organization: null }, { organization: organizationId }] };
}

function offered(cluster: GpuClusterRecord, gpuType: string): number {
  return cluster.gpus.find((g) => g.gpuType === gpuType)?.count ?? 0;
}

/** The rule of catalog/node-groups.ts, which the stack checks too (the schema has checked each group's fields). */
function checkNodeGroups(groups: readonly NodeGroup[]): void {
  const problem = nodeGroupsProblem(groups);
  if (problem) throw invalidField(problem.field, problem.message);
}

/** The rule of catalog/node-pools.ts, which the local-gpu-pool stack checks too (the schema has checked only types). */
function checkNodePools(pools: readonly NodePool[]): void {
  const problem = nodePoolsProblem(pools);
  if (problem) throw invalidField(problem.field, problem.message);
}


function nameTaken(name: string): ConflictError {
  return new ConflictError(`A GPU cluster named ${name} already exists`, { field: 'name' });
}

/** `inUse`: the GPUs its deployments hold per type (gpusInUse); none when absent (a cluster just made). */
function view(c: GpuClusterRecord, inUse: ReadonlyMap<string, number> = new Map()): ClusterViewBody {
  const gpus = c.gpus.map((g) => ({ gpuType: g.gpuType, count: g.count, inUse: inUse.get(g.gpuType) ?? 0 }));
  // GPUs held of a type the cluster no longer offers (its nodes changed under running deployments) are shown, not hidden.
  for (const [gpuType, held] of inUse) if (!gpus.some((g) => g.gpuType === gpuType)) gpus.push({ gpuType, count: 0, inUse: held });
  const aws = c.provider === 'aws' ? c.spec as AwsClusterSpec : null;
  const local = c.provider === 'local' ? c.spec as LocalClusterSpec : null;
  return {
    id: c.id, organizationId: c.organization?.id ?? null, name: c.name, provider: c.provider, status: c.status, gpus,
    region: aws?.region ?? null, nodeGroups: aws ? aws.nodeGroups.map((g) => ({ ...g })) : null,
    nodePools: local ? local.nodePools.map((pool) => ({ ...pool })) : null, gatewayUrl: c.gatewayUrl ?? null,
    failureReason: c.failureReason ?? null, createdAt: c.createdAt.toISOString(), updatedAt: c.updatedAt.toISOString(),
  };
}

export type ClusterService = ReturnType<typeof createClusterService>;
