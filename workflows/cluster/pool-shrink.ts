// Shrinks a `local` cluster's node pools after idle time. The cluster's workflow reads which of its pools' nodes
// run a Kiln replica (use) and keeps, in its own state, since when each has run none; nodes idle for the worker's
// KILN_POOL_IDLE_SECONDS are offered to shrink, which drains them (cordoned: nothing new lands), confirms no Kiln
// pod is on them, and commits the pool's smaller size with its `cluster.pool_shrunk` event; the workflow's next
// `pulumi up` removes them. A pool removes nodes from the top (`<pool>-<desiredSize - 1>` first), so only idle top
// nodes go. Idempotent: a retried shrink finds its commit (the request id), or drains the same nodes again.
import { LockMode } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { VLLM_PODS_SELECTOR } from '../../catalog/model-server.ts';
import { planPoolShrink } from '../../catalog/node-pools.ts';
import type { KubeApi } from '../../lib/kubernetes/api.ts';
import { GpuClusterSchema, type LocalClusterSpec } from '../../control-plane/clusters/gpu-cluster.entity.ts';
import { NODE_POOL_LABEL } from '../../stacks/local-gpu-pool/index.ts';
import { desiredClusterOf, type DesiredLocalCluster } from '../contract/cluster.ts';
import { capacityEventDeliveries, recordPoolDecision } from './capacity-events.ts';

/** The shrink request a node carries while it is drained for it: only that request puts it back. */
export const DRAINED_FOR_ANNOTATION = 'kiln.dev/drained-for';
/** KILN_POOL_IDLE_SECONDS' default. */
export const DEFAULT_POOL_IDLE_MS = 600_000;

export interface PoolUse {
  /** The nodes of the cluster's pools, and whether a Kiln replica runs on each. */
  readonly nodes: readonly { readonly name: string; readonly busy: boolean }[];
  /** How long a node must have run no replica before it is removed. */
  readonly idleAfterMs: number;
  /** How often the workflow reads the use again. */
  readonly checkIntervalMs: number;
}

export interface PoolShrinkRequest {
  readonly clusterId: string;
  /** Unique per shrink the workflow asks for: a retry finds its commit. */
  readonly requestId: string;
  /** Nodes idle for the idle time, as the workflow saw them. */
  readonly idleNodes: readonly string[];
}

export type PoolShrinkResult =
  | { readonly shrunk: true; readonly reason: string; readonly nodes: readonly string[]; readonly desired: DesiredLocalCluster }
  | { readonly shrunk: false; readonly reason: string };

interface NodeList { items: { metadata: { name: string; annotations?: Record<string, string> } }[] }
interface PodList { items: { metadata: { name: string; namespace?: string }; spec?: { nodeName?: string } }[] }

/** The Kiln replicas (model-server pods not ended) and the node each is bound to. */
async function kilnPods(api: KubeApi): Promise<PodList['items']> {
  const query = `labelSelector=${encodeURIComponent(VLLM_PODS_SELECTOR)}&fieldSelector=${encodeURIComponent('status.phase!=Succeeded,status.phase!=Failed')}`;
  return (await api.get<PodList>(`/api/v1/pods?${query}`)).items;
}

const patchNode = (api: KubeApi, name: string, patch: unknown) =>
  api.request('PATCH', `/api/v1/nodes/${encodeURIComponent(name)}`, patch, 'application/merge-patch+json');

export interface PoolShrinkDeps {
  readonly orm: MikroORM;
  readonly client: Client;
  /** The cluster's API, through its registered kubeconfig. */
  readonly apiOf: (clusterId: string) => Promise<KubeApi>;
  readonly idleAfterMs?: number;
}

export function poolShrink(deps: PoolShrinkDeps) {
  const { orm } = deps;
  const deliver = capacityEventDeliveries(orm, deps.client);
  const idleAfterMs = deps.idleAfterMs ?? DEFAULT_POOL_IDLE_MS;
  const checkIntervalMs = Math.min(60_000, Math.max(1_000, Math.round(idleAfterMs / 10)));

  /** Puts back the nodes this request drained (and no one else's cordon). */
  async function release(api: KubeApi, names: readonly string[], requestId: string): Promise<void> {
    if (names.length === 0) return;
    const nodes = (await api.get<NodeList>(`/api/v1/nodes?labelSelector=${encodeURIComponent(NODE_POOL_LABEL)}`)).items;
    for (const node of nodes.filter((n) => names.includes(n.metadata.name) && n.metadata.annotations?.[DRAINED_FOR_ANNOTATION] === requestId)) {
      await patchNode(api, node.metadata.name, { metadata: { annotations: { [DRAINED_FOR_ANNOTATION]: null } }, spec: { unschedulable: null } });
    }
  }

  return {
    async use(clusterId: string): Promise<PoolUse> {
      const cluster = await orm.em.fork().findOne(GpuClusterSchema, { id: clusterId });
      const pools = cluster?.provider === 'local' && !cluster.deleteRequested ? (cluster.spec as LocalClusterSpec).nodePools : [];
      if (pools.length === 0) return { nodes: [], idleAfterMs, checkIntervalMs };
      const api = await deps.apiOf(clusterId);
      const selector = `${NODE_POOL_LABEL} in (${pools.map((p) => p.name).join(',')})`;
      const [nodes, pods] = await Promise.all([api.get<NodeList>(`/api/v1/nodes?labelSelector=${encodeURIComponent(selector)}`), kilnPods(api)]);
      const busy = new Set(pods.flatMap((p) => p.spec?.nodeName ?? []));
      return { nodes: nodes.items.map((n) => ({ name: n.metadata.name, busy: busy.has(n.metadata.name) })), idleAfterMs, checkIntervalMs };
    },

    async shrink(request: PoolShrinkRequest): Promise<PoolShrinkResult> {
      const api = await deps.apiOf(request.clusterId);
      const result = await orm.em.fork().transactional(async (em) => {
        const cluster = await em.findOneOrFail(GpuClusterSchema, { id: request.clusterId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (cluster.provider !== 'local' || cluster.deleteRequested) {
          await release(api, request.idleNodes, request.requestId);
          return { shrunk: false, reason: `cluster ${cluster.name} has no node pool Kiln can shrink` } as const;
        }
        const spec = cluster.spec as LocalClusterSpec;
        const done = spec.lastShrink;
        if (done?.requestId === request.requestId) {
          return { shrunk: true, reason: done.reason, nodes: done.nodes, desired: desiredClusterOf(cluster) as DesiredLocalCluster, events: done.events } as const;
        }
        // A change the workflow has not applied yet (an administrator's, a growth's) goes first.
        const plan = cluster.status === 'ready' ? planPoolShrink(spec.nodePools, new Set(request.idleNodes)) : {};
        const planned: readonly string[] = plan.pool === undefined ? [] : plan.nodes;
        await release(api, request.idleNodes.filter((n) => !planned.includes(n)), request.requestId);
        if (plan.pool === undefined) return { shrunk: false, reason: 'no idle node at the top of a pool above its minimum' } as const;
        // Drained: cordoned, so the scheduler places nothing new there; then no Kiln replica may be on them.
        for (const name of plan.nodes) {
          await patchNode(api, name, { metadata: { annotations: { [DRAINED_FOR_ANNOTATION]: request.requestId } }, spec: { unschedulable: true } });
        }
        const running = (await kilnPods(api)).filter((p) => plan.nodes.includes(p.spec?.nodeName ?? ''));
        if (running.length > 0) {
          await release(api, plan.nodes, request.requestId);
          return { shrunk: false, reason: `node ${running[0]!.spec!.nodeName} runs Kiln replica ${running[0]!.metadata.namespace}/${running[0]!.metadata.name}` } as const;
        }
        const pool = spec.nodePools.find((p) => p.name === plan.pool)!;
        const events = await recordPoolDecision(em, cluster, {
          type: 'cluster.pool_shrunk', requestId: request.requestId, pool: pool.name, gpuType: pool.gpuType,
          previousSize: pool.desiredSize, size: plan.size, nodes: plan.nodes, reason: plan.reason,
        });
        cluster.spec = {
          ...spec,
          nodePools: spec.nodePools.map((p) => (p.name === plan.pool ? { ...p, desiredSize: plan.size } : p)),
          lastShrink: { requestId: request.requestId, reason: plan.reason, nodes: plan.nodes, events },
        } satisfies LocalClusterSpec;
        cluster.generation += 1;
        // The workflow gets this desired state in the answer: nothing is left for the API's redelivery to send.
        cluster.sentGeneration = cluster.generation;
        cluster.status = 'scaling';
        return { shrunk: true, reason: plan.reason, nodes: plan.nodes, desired: desiredClusterOf(cluster) as DesiredLocalCluster, events } as const;
      });
      if (!result.shrunk) return result;
      await deliver(result.events);
      const { events: _events, ...answer } = result;
      return answer;
    },
  };
}
