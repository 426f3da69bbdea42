// The Pulumi program of one `aws` GPU cluster: the gpu-cluster component (EKS, a GPU node group per type,
// the NVIDIA device plugin). The region is stack configuration (`aws:region`), set by the activity.
import type { PulumiFn } from '@pulumi/pulumi/automation/index.js';
import { GpuCluster } from '../../stacks/gpu-cluster/index.ts';
import type { ProgramRef } from '../pulumi/automation.ts';
import type { ClusterTarget } from './activities.ts';

/** Reference to clusterProgram for the activities, which run it in a process of its own. */
export function clusterProgramRef(target: ClusterTarget): ProgramRef {
  return { programModule: import.meta.url, programExport: 'clusterProgram', programInput: target };
}

export function clusterProgram(target: ClusterTarget): PulumiFn {
  return async () => {
    const cluster = new GpuCluster(target.name, {
      subnetIds: [...target.desired.subnetIds],
      nodeGroups: target.desired.nodeGroups,
      kubernetesVersion: target.desired.kubernetesVersion,
    });
    return { kubeconfig: cluster.kubeconfig, clusterName: cluster.clusterName };
  };
}
