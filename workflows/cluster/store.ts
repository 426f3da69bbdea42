// Writes a provisioned cluster's status, and its stack's outputs (kubeconfig sealed, GPUs offered), to PostgreSQL;
// reads a `local` cluster's registered kubeconfig for its stack.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { SecretBox } from '../../lib/secret-box.ts';
import { GpuClusterSchema } from '../../control-plane/clusters/gpu-cluster.entity.ts';
import type { ClusterOutputs, ClusterStatusUpdate } from './activities.ts';

export function createClusterStore(orm: MikroORM, kubeconfigs: SecretBox) {
  return {
    async record(update: ClusterStatusUpdate): Promise<void> {
      const em = orm.em.fork();
      const cluster = await em.findOneOrFail(GpuClusterSchema, { id: update.clusterId });
      cluster.status = update.status;
      cluster.failureReason = update.failureReason ?? null;
      if (update.status === 'deleted') Object.assign(cluster, { deletedAt: cluster.deletedAt ?? new Date(), sealedKubeconfig: null });
      await em.flush();
    },

    async recordOutputs(clusterId: string, outputs: ClusterOutputs): Promise<void> {
      const em = orm.em.fork();
      const cluster = await em.findOneOrFail(GpuClusterSchema, { id: clusterId });
      if (outputs.kubeconfig !== undefined) cluster.sealedKubeconfig = kubeconfigs.seal(outputs.kubeconfig);
      cluster.gpus = outputs.gpus.map((g) => ({ ...g }));
      await em.flush();
    },

    async kubeconfig(clusterId: string): Promise<string> {
      const cluster = await orm.em.fork().findOneOrFail(GpuClusterSchema, { id: clusterId });
      if (!cluster.sealedKubeconfig) throw new Error(`GPU cluster ${clusterId} has no kubeconfig`);
      return kubeconfigs.open(cluster.sealedKubeconfig);
    },
  };
}
