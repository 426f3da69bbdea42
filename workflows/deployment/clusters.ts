// The deployment activities' view of GPU clusters and provisioning circuits, read from PostgreSQL: the
// cluster a deployment was placed on (its kubeconfig unsealed) and the circuit of its provider and GPU type.
import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure } from '@temporalio/activity';
import type { SecretBox } from '../../lib/secret-box.ts';
import { DeploymentSchema } from '../../control-plane/deployments/deployment.entity.ts';
import { circuitProviderOf, GpuClusterSchema, type GpuClusterRecord } from '../../control-plane/clusters/gpu-cluster.entity.ts';
import type { CircuitService } from '../../control-plane/recovery/circuits.ts';
import type { ProvisioningCircuits, ServingCluster } from './activities.ts';

export function clusterAccess(orm: MikroORM, kubeconfigs: SecretBox) {
  // Waiting cannot give a deployment a cluster or a cluster a kubeconfig: fail for good, with the reason.
  const access = (cluster: GpuClusterRecord): ServingCluster => {
    if (!cluster.sealedKubeconfig) throw ApplicationFailure.nonRetryable(`GPU cluster ${cluster.name} (${cluster.id}) has no kubeconfig`, 'NoCluster');
    return { clusterId: cluster.id, provider: circuitProviderOf(cluster), kubeconfig: kubeconfigs.open(cluster.sealedKubeconfig) };
  };
  return {
    async accessFor(deploymentId: string): Promise<ServingCluster> {
      const deployment = await orm.em.fork().findOneOrFail(DeploymentSchema, { id: deploymentId }, { populate: ['cluster'] });
      const cluster = deployment.cluster?.getEntity();
      if (!cluster) throw ApplicationFailure.nonRetryable(`deployment ${deploymentId} has no GPU cluster`, 'NoCluster');
      return access(cluster);
    },
    async accessToCluster(clusterId: string): Promise<ServingCluster> {
      const cluster = await orm.em.fork().findOne(GpuClusterSchema, { id: clusterId });
      if (!cluster) throw ApplicationFailure.nonRetryable(`GPU cluster ${clusterId} does not exist`, 'NoCluster');
      return access(cluster);
    },
  };
}

export function provisioningCircuits(orm: MikroORM, circuits: CircuitService): ProvisioningCircuits {
  return {
    async acquire(key) {
      const circuit = await circuits.acquire(orm.em.fork(), key);
      if (!circuit) return undefined;
      const when = circuit.state === 'open' ? `it half-opens at ${circuit.halfOpensAt}` : 'its trial attempt is under way';
      // The last failure may be another organization's: this reason is shown to the deployment's own.
      return { reason: `the ${key.provider}/${key.gpuType} provisioning circuit is ${circuit.state} after ${circuit.failures} failed attempts; ${when}` };
    },
    recordSuccess: (key) => circuits.recordSuccess(orm.em.fork(), key),
    recordFailure: (key, reason) => circuits.recordFailure(orm.em.fork(), key, reason),
  };
}
