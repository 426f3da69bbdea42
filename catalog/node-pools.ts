// The node pools of a `local` GPU cluster: kwok-simulated GPU machines shaped like the node groups of an `aws`
// one, with a name and the GPUs per machine (on EKS the instance type decides those). One rule, shared by the API
// (which refuses a bad pool before any workflow starts) and the local-gpu-pool stack (which refuses to build one).
import { NAME_PATTERN } from './deployment-rules.ts';
import { GPU_TYPE_IDS, findGpuType } from './gpu-types.ts';
import { nodeGroupGpusPerNode, type NodeGroup } from './node-groups.ts';

export interface NodePool extends NodeGroup {
  /** Names the nodes `<name>-0` to `<name>-<desiredSize - 1>`. */
  readonly name: string;
  /** GPUs each node advertises as `nvidia.com/gpu`. */
  readonly gpusPerNode: number;
}

/** What is wrong with a pool: `field` the argument at fault (none when it is the sizes together), `message` a sentence naming it. */
export interface NodePoolProblem {
  readonly field?: string;
  readonly message: string;
}

/** A node's name is also its `kubernetes.io/hostname` label, whose values are at most 63 characters. */
const MAX_NODE_NAME_LENGTH = 63;
/** As many nodes as an `aws` node group may have. */
const MAX_POOL_SIZE = 1000;
/** The most GPUs a machine of the catalog has. */
const MAX_GPUS_PER_NODE = 16;

/** Whole sizes with minSize <= desiredSize <= maxSize, GPUs on every node, a catalog GPU type, a name that makes valid node names. */
export function nodePoolProblem(pool: NodePool): NodePoolProblem | undefined {
  const { name, gpuType, gpusPerNode, minSize, desiredSize, maxSize } = pool;
  const count = (field: string, value: number, least: number, most: number) => (Number.isInteger(value) && value >= least && value <= most
    ? undefined : { field, message: `${field} must be a whole number from ${least} to ${most}, got ${value}` });
  const sizes = count('minSize', minSize, 0, MAX_POOL_SIZE) ?? count('desiredSize', desiredSize, 0, MAX_POOL_SIZE) ?? count('maxSize', maxSize, 1, MAX_POOL_SIZE);
  if (sizes) return sizes;
  if (!(minSize <= desiredSize && desiredSize <= maxSize)) {
    return { message: `must satisfy minSize <= desiredSize <= maxSize, got ${minSize} <= ${desiredSize} <= ${maxSize}` };
  }
  const gpus = count('gpusPerNode', gpusPerNode, 1, MAX_GPUS_PER_NODE);
  if (gpus) return gpus;
  if (!findGpuType(gpuType)) return { field: 'gpuType', message: `gpuType "${gpuType}" is not in the GPU catalog: one of ${GPU_TYPE_IDS.join(', ')}` };
  const lastNode = `${name}-${maxSize - 1}`;
  if (!NAME_PATTERN.test(name) || lastNode.length > MAX_NODE_NAME_LENGTH) {
    return { field: 'name', message: `name "${name}" must be a DNS label (lowercase letters, digits and '-', starting with a letter) short enough that node "${lastNode}" has at most ${MAX_NODE_NAME_LENGTH} characters` };
  }
  return undefined;
}

/** A cluster's pools: at least one, each by nodePoolProblem, names distinct (they name the nodes); `field` as the API names it (`nodePools.0.minSize`). */
export function nodePoolsProblem(pools: readonly NodePool[]): { field: string; message: string } | undefined {
  if (pools.length === 0) return { field: 'nodePools', message: 'a local GPU cluster needs at least one node pool' };
  const seen = new Set<string>();
  for (const [i, pool] of pools.entries()) {
    const problem = nodePoolProblem(pool);
    if (problem) return { field: problem.field ? `nodePools.${i}.${problem.field}` : `nodePools.${i}`, message: problem.message };
    if (seen.has(pool.name)) return { field: `nodePools.${i}.name`, message: `name "${pool.name}" is taken by another pool of the cluster` };
    seen.add(pool.name);
  }
  return undefined;
}

/**
 * What growth reads of a `local` pool or of an `aws` node group (named by its GPU type, its GPUs per node its
 * instance type's): `label` how reasons name it, `pool <name>` when absent.
 */
export type GrowablePool = Pick<NodePool, 'name' | 'gpuType' | 'gpusPerNode' | 'desiredSize' | 'maxSize'> & { readonly label?: string };

/** The pools a cluster's growth chooses from: a `local` cluster's node pools, or an `aws` cluster's node groups. */
export function growablePools(spec: { readonly nodePools: readonly NodePool[] } | { readonly nodeGroups: readonly NodeGroup[] }): GrowablePool[] {
  if ('nodePools' in spec) return [...spec.nodePools];
  return spec.nodeGroups.map((group) => ({
    name: group.gpuType, label: `node group ${group.gpuType}`, gpuType: group.gpuType, desiredSize: group.desiredSize, maxSize: group.maxSize,
    gpusPerNode: nodeGroupGpusPerNode(group.gpuType),
  }));
}

/** What growing a cluster's pools for replicas that cannot be placed comes to: nodes added to one pool, or why none can be. */
export type PoolGrowthPlan =
  | { readonly pool: string; readonly nodes: number; readonly reason: string }
  | { readonly pool?: undefined; readonly reason: string };

/**
 * The first pool of `gpuType` whose nodes take a replica of `gpusPerReplica` GPUs and that has room below its
 * maximum grows by the nodes the missing replicas need (a replica's GPUs all on one node), at most to its maximum.
 */
export function planPoolGrowth(pools: readonly GrowablePool[], gpuType: string, missingReplicas: number, gpusPerReplica: number): PoolGrowthPlan {
  const fitting = pools.filter((p) => p.gpuType === gpuType && p.gpusPerNode >= gpusPerReplica);
  if (fitting.length === 0) return { reason: `no node pool of the cluster has ${gpuType} nodes of ${gpusPerReplica} GPU${gpusPerReplica === 1 ? '' : 's'} or more` };
  const pool = fitting.find((p) => p.desiredSize < p.maxSize);
  const labelOf = (p: GrowablePool) => p.label ?? `pool ${p.name}`;
  if (!pool) return { reason: fitting.map((p) => `${labelOf(p)} is at its maximum of ${p.maxSize} node${p.maxSize === 1 ? '' : 's'}`).join('; ') };
  const replicasPerNode = Math.floor(pool.gpusPerNode / gpusPerReplica);
  const nodes = Math.min(Math.ceil(missingReplicas / replicasPerNode), pool.maxSize - pool.desiredSize);
  return { pool: pool.name, nodes, reason: `adding ${nodes} ${gpuType} node${nodes === 1 ? '' : 's'} to ${labelOf(pool)}` };
}

/** One pool's growth in a PoolGrowthForecast: `nodes` added, from `fromNodes` to `fromNodes + nodes`. */
export interface PoolGrowthStep {
  readonly pool: string;
  /** How reasons name the pool (`pool l4`, `node group nvidia-l4`). */
  readonly label: string;
  readonly gpuType: string;
  readonly gpusPerNode: number;
  readonly fromNodes: number;
  readonly nodes: number;
  /** What the added nodes cost per hour, unrounded US cents: the GPU type's price x GPUs per node x nodes. */
  readonly exactHourlyCents: number;
}

/** Whether growing the pools places every missing replica, the growths that would, and what is still missing. */
export interface PoolGrowthForecast {
  readonly steps: readonly PoolGrowthStep[];
  /** Replicas still missing after every growth the rule allows: 0 when the growth places them all. */
  readonly unplaced: number;
  /** The last plan's reason: why no pool grows further (when `unplaced` > 0). */
  readonly reason: string;
}

/**
 * What a deployment's rollout would do to the pools for `missingReplicas` that cannot be placed: it asks
 * planPoolGrowth, waits for the nodes, and asks again for what is still missing (a pool grown to its maximum
 * leaves the next pool of the type to grow), until every replica is placed or no pool can grow. The dry run's
 * forecast; the rollout itself calls planPoolGrowth once per round.
 */
export function forecastPoolGrowth(pools: readonly GrowablePool[], gpuType: string, missingReplicas: number, gpusPerReplica: number): PoolGrowthForecast {
  let current = pools;
  let unplaced = missingReplicas;
  const steps: PoolGrowthStep[] = [];
  const price = findGpuType(gpuType)?.hourlyPriceUsd ?? 0;
  while (unplaced > 0) {
    const plan = planPoolGrowth(current, gpuType, unplaced, gpusPerReplica);
    if (plan.pool === undefined) return { steps, unplaced, reason: plan.reason };
    const pool = current.find((p) => p.name === plan.pool)!;
    steps.push({ pool: pool.name, label: pool.label ?? `pool ${pool.name}`, gpuType, gpusPerNode: pool.gpusPerNode, fromNodes: pool.desiredSize, nodes: plan.nodes, exactHourlyCents: price * 100 * pool.gpusPerNode * plan.nodes });
    unplaced = Math.max(0, unplaced - plan.nodes * Math.floor(pool.gpusPerNode / gpusPerReplica));
    current = current.map((p) => (p === pool ? { ...p, desiredSize: p.desiredSize + plan.nodes } : p));
  }
  return { steps, unplaced: 0, reason: steps.map((s) => `adding ${s.nodes} ${gpuType} node${s.nodes === 1 ? '' : 's'} to ${s.label}`).join(', then ') };
}

/** What shrinking a cluster's pools after idle time comes to: the nodes removed from one pool, or nothing to remove. */
export type PoolShrinkPlan =
  | { readonly pool: string; readonly nodes: readonly string[]; readonly size: number; readonly reason: string }
  | { readonly pool?: undefined };

/**
 * A pool's nodes are `<name>-0` to `<name>-<desiredSize - 1>` and a smaller size removes them from the top: the
 * first pool above its minimum whose top nodes are idle (in `idle`) loses those, down to its minimum at most. An
 * idle node below a busy one stays until the busy one is idle too.
 */
export function planPoolShrink(pools: readonly NodePool[], idle: ReadonlySet<string>): PoolShrinkPlan {
  for (const pool of pools) {
    const nodes: string[] = [];
    for (let index = pool.desiredSize - 1; index >= pool.minSize && idle.has(`${pool.name}-${index}`); index -= 1) nodes.push(`${pool.name}-${index}`);
    if (nodes.length === 0) continue;
    const size = pool.desiredSize - nodes.length;
    const n = nodes.length;
    return { pool: pool.name, nodes, size, reason: `removing ${n} idle ${pool.gpuType} node${n === 1 ? '' : 's'} from pool ${pool.name} (${nodes.join(', ')}), ${size} left` };
  }
  return {};
}
