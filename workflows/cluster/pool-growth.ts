// Grows a `local` cluster's node pool for a deployment whose replicas cannot be placed: the new pool size is
// committed to the cluster's desired state (so an administrator's next PATCH starts from it) and sent to the
// cluster's workflow, whose `pulumi up` adds the nodes, exactly as an administrator's resize is.
import { LockMode } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { planPoolGrowth } from '../../catalog/node-pools.ts';
import { DeploymentSchema } from '../../control-plane/deployments/deployment.entity.ts';
import { GpuClusterSchema, type LocalClusterSpec } from '../../control-plane/clusters/gpu-cluster.entity.ts';
import { desiredClusterOf, desiredClusterSignal } from '../contract/cluster.ts';
import type { PoolGrowthRequest, PoolGrowthResult } from '../deployment/activities.ts';

export function poolGrowth(orm: MikroORM, client: Client) {
  return {
    async grow(request: PoolGrowthRequest): Promise<PoolGrowthResult> {
      const result = await orm.em.fork().transactional(async (em) => {
        const deployment = await em.findOneOrFail(DeploymentSchema, { id: request.deploymentId });
        const cluster = await em.findOneOrFail(GpuClusterSchema, { id: deployment.cluster!.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (cluster.provider !== 'local' || cluster.deleteRequested) return { adding: false, reason: `cluster ${cluster.name} has no node pool Kiln can grow` } as const;
        const spec = cluster.spec as LocalClusterSpec;
        if (spec.lastGrowth?.requestId === request.requestId) return { adding: true, reason: spec.lastGrowth.reason, cluster } as const;
        const plan = planPoolGrowth(spec.nodePools, request.gpuType, request.missingReplicas, request.gpusPerReplica);
        if (plan.pool === undefined) return { adding: false, reason: plan.reason } as const;
        cluster.spec = {
          nodePools: spec.nodePools.map((p) => (p.name === plan.pool ? { ...p, desiredSize: p.desiredSize + plan.nodes } : p)),
          lastGrowth: { requestId: request.requestId, reason: plan.reason },
        } satisfies LocalClusterSpec;
        cluster.generation += 1;
        // Scaling from the commit on: the deployment's readiness does not count the growth against its grace.
        if (cluster.status === 'ready') cluster.status = 'scaling';
        return { adding: true, reason: plan.reason, cluster } as const;
      });
      if (!result.adding) return result;
      await client.workflow.getHandle(result.cluster.id).signal(desiredClusterSignal, desiredClusterOf(result.cluster));
      return { adding: true, reason: result.reason };
    },

    /** Whether the cluster is being built or resized: pods waiting for it are not yet out of GPUs. */
    async scaling(clusterId: string): Promise<boolean> {
      const cluster = await orm.em.fork().findOne(GpuClusterSchema, { id: clusterId });
      return cluster?.status === 'provisioning' || cluster?.status === 'scaling';
    },
  };
}
