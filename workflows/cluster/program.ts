// The Pulumi programs of the cluster workflow. An `aws` cluster: the gpu-cluster component (EKS, a GPU node group
// per type, the NVIDIA device plugin); the region is stack configuration (`aws:region`), set by the activity. A
// `local` cluster: a LocalGpuPool per node pool, through the real Kubernetes provider on the registered cluster.
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import type { PulumiFn } from '@pulumi/pulumi/automation/index.js';
import type { NodePool } from '../../catalog/node-pools.ts';
import { GpuCluster } from '../../stacks/gpu-cluster/index.ts';
import { LocalGpuPool } from '../../stacks/local-gpu-pool/index.ts';
import type { DesiredAwsCluster, DesiredLocalCluster } from '../contract/cluster.ts';
import type { ProgramRef } from '../pulumi/automation.ts';
import type { ClusterTarget } from './activities.ts';

/** Reference to clusterProgram for the activities, which run it in a process of its own. */
export function clusterProgramRef(target: ClusterTarget<DesiredAwsCluster>): ProgramRef {
  return { programModule: import.meta.url, programExport: 'clusterProgram', programInput: target };
}

export function clusterProgram(target: ClusterTarget<DesiredAwsCluster>): PulumiFn {
  return async () => {
    const cluster = new GpuCluster(target.name, {
      subnetIds: [...target.desired.subnetIds],
      nodeGroups: target.desired.nodeGroups,
      kubernetesVersion: target.desired.kubernetesVersion,
    });
    return { kubeconfig: cluster.kubeconfig, clusterName: cluster.clusterName };
  };
}

/** Reference to localClusterProgram (its input, the kubeconfig with it, goes over the IPC channel, never the command line). */
export function localClusterProgramRef(target: ClusterTarget<DesiredLocalCluster>, kubeconfig: string): ProgramRef {
  return { programModule: import.meta.url, programExport: 'localClusterProgram', programInput: { nodePools: target.desired.nodePools, kubeconfig } };
}

export function localClusterProgram({ nodePools, kubeconfig }: { nodePools: readonly NodePool[]; kubeconfig: string }): PulumiFn {
  return async () => {
    const provider = new k8s.Provider('cluster', { kubeconfig });
    const pools = nodePools.map((pool) => new LocalGpuPool(pool.name, pool, { provider }));
    return { nodeNames: pulumi.all(pools.map((p) => p.nodeNames)).apply((names) => names.flat()) };
  };
}
