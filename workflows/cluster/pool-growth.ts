// Grows a cluster's node pool (`local`) or EKS node group (`aws`) for a deployment whose replicas cannot be
// placed: the new size is committed to the cluster's desired state (so an administrator's next PATCH starts
// from it) and sent to the cluster's workflow, whose `pulumi up` adds the nodes (a local pool's Node objects, a
// node group's desired size), exactly as an administrator's resize is. The decision is recorded with it
// (capacity-events.ts): `cluster.pool_grown` for the platform, `deployment.capacity_requested` for the
// deployment's organization.
import { LockMode } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { growablePools, planPoolGrowth } from '../../catalog/node-pools.ts';
import { DeploymentSchema } from '../../control-plane/deployments/deployment.entity.ts';
import { GpuClusterSchema, type AwsClusterSpec, type LocalClusterSpec } from '../../control-plane/clusters/gpu-cluster.entity.ts';
import { desiredClusterOf, desiredClusterSignal } from '../contract/cluster.ts';
import { capacityEventDeliveries, recordPoolDecision } from './capacity-events.ts';
import type { PoolGrowthRequest, PoolGrowthResult } from '../deployment/activities.ts';

export function poolGrowth(orm: MikroORM, client: Client) {
  const deliver = capacityEventDeliveries(orm, client);
  return {
    async grow(request: PoolGrowthRequest): Promise<PoolGrowthResult> {
      const result = await orm.em.fork().transactional(async (em) => {
        const deployment = await em.findOneOrFail(DeploymentSchema, { id: request.deploymentId }, { populate: ['organization'] });
        const cluster = await em.findOneOrFail(GpuClusterSchema, { id: deployment.cluster!.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if ((cluster.provider !== 'local' && cluster.provider !== 'aws') || cluster.deleteRequested) return { adding: false, reason: `cluster ${cluster.name} has no node pool Kiln can grow` } as const;
        const spec = cluster.spec as LocalClusterSpec | AwsClusterSpec;
        if (spec.lastGrowth?.requestId === request.requestId) return { adding: true, reason: spec.lastGrowth.reason, cluster, events: spec.lastGrowth.events ?? [] } as const;
        const pools = growablePools(spec);
        const plan = planPoolGrowth(pools, request.gpuType, request.missingReplicas, request.gpusPerReplica);
        if (plan.pool === undefined) return { adding: false, reason: plan.reason } as const;
        const pool = pools.find((p) => p.name === plan.pool)!;
        const events = await recordPoolDecision(em, cluster, {
          type: 'cluster.pool_grown', requestId: request.requestId, pool: pool.name, gpuType: pool.gpuType, previousSize: pool.desiredSize,
          size: pool.desiredSize + plan.nodes, reason: plan.reason, deployment,
          // A local pool names its nodes; an EKS node group's are named by AWS as they come.
          nodes: 'nodePools' in spec ? Array.from({ length: plan.nodes }, (_, i) => `${pool.name}-${pool.desiredSize + i}`) : [],
        });
        const grown = <P extends { desiredSize: number }>(p: P, name: string): P => (name === plan.pool ? { ...p, desiredSize: p.desiredSize + plan.nodes } : p);
        const lastGrowth = { requestId: request.requestId, reason: plan.reason, events };
        cluster.spec = 'nodePools' in spec
          ? { nodePools: spec.nodePools.map((p) => grown(p, p.name)), lastGrowth, ...(spec.lastShrink ? { lastShrink: spec.lastShrink } : {}) } satisfies LocalClusterSpec
          : { ...spec, nodeGroups: spec.nodeGroups.map((g) => grown(g, g.gpuType)), lastGrowth } satisfies AwsClusterSpec;
        cluster.generation += 1;
        // Scaling from the commit on: the deployment's readiness does not count the growth against its grace.
        if (cluster.status === 'ready') cluster.status = 'scaling';
        return { adding: true, reason: plan.reason, cluster, events } as const;
      });
      if (!result.adding) return result;
      await client.workflow.getHandle(result.cluster.id).signal(desiredClusterSignal, desiredClusterOf(result.cluster));
      await orm.em.fork().nativeUpdate(GpuClusterSchema, { id: result.cluster.id, sentGeneration: { $lt: result.cluster.generation } }, { sentGeneration: result.cluster.generation });
      await deliver(result.events);
      return { adding: true, reason: result.reason };
    },

    /** Whether the cluster is being built or resized: pods waiting for it are not yet out of GPUs. */
    async scaling(clusterId: string): Promise<boolean> {
      const cluster = await orm.em.fork().findOne(GpuClusterSchema, { id: clusterId });
      return cluster?.status === 'provisioning' || cluster?.status === 'scaling';
    },
  };
}
