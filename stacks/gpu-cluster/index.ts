// An AWS EKS cluster with one managed GPU node group per catalog GPU type and the NVIDIA device plugin.
import * as aws from '@pulumi/aws';
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import { nodeGroupsProblem, type NodeGroup } from '../../catalog/node-groups.ts';
import { StackArgsError } from '../args-error.ts';
import { nvidiaDevicePlugin } from './device-plugin.ts';
import { POLICIES, serviceRole } from './iam.ts';
import { instanceTypeFor } from './instance-types.ts';
import { eksKubeconfig } from './kubeconfig.ts';

export { GPUS_PER_INSTANCE, INSTANCE_TYPES, instanceTypeFor } from './instance-types.ts';
export { StackArgsError } from '../args-error.ts';

export interface GpuClusterArgs {
  /** Subnets (at least two availability zones) for the control plane and the nodes. */
  readonly subnetIds: pulumi.Input<pulumi.Input<string>[]>;
  /** One node group per GPU type; a plain list with plain GPU types because each entry becomes a child resource. */
  readonly nodeGroups: readonly NodeGroup<pulumi.Input<number>>[];
  /** Kubernetes minor version, e.g. `1.33`; the current EKS default when absent. */
  readonly kubernetesVersion?: pulumi.Input<string>;
  /** Root disk per node, GiB; model weights are cached there. */
  readonly nodeDiskSizeGb?: pulumi.Input<number>;
}

/** EKS-optimized Amazon Linux 2023 with the NVIDIA driver and container toolkit. */
const GPU_AMI_TYPE = 'AL2023_x86_64_NVIDIA';
const DEFAULT_NODE_DISK_SIZE_GB = 500;
/** EKS names taint effects in its own spelling. */
const EKS_TAINT_EFFECT = { NoSchedule: 'NO_SCHEDULE', NoExecute: 'NO_EXECUTE', PreferNoSchedule: 'PREFER_NO_SCHEDULE' } as const;

export class GpuCluster extends pulumi.ComponentResource {
  /** Admin kubeconfig; signs in through `aws eks get-token`. */
  readonly kubeconfig: pulumi.Output<string>;
  readonly clusterName: pulumi.Output<string>;
  readonly nodeGroupNames: pulumi.Output<string[]>;

  constructor(name: string, args: GpuClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    checkNodeGroups(args.nodeGroups);
    super('kiln:stacks:GpuCluster', name, args, opts);

    const clusterRole = serviceRole(`${name}-cluster`, 'eks.amazonaws.com', [POLICIES.eksCluster], this);
    const cluster = new aws.eks.Cluster(`${name}-eks`, {
      roleArn: clusterRole.role.arn,
      version: args.kubernetesVersion,
      vpcConfig: { subnetIds: args.subnetIds },
      // Access entries instead of the aws-auth ConfigMap; whoever runs the stack administers the cluster.
      accessConfig: { authenticationMode: 'API', bootstrapClusterCreatorAdminPermissions: true },
    }, { parent: this, dependsOn: clusterRole.attachments });

    const nodeRole = serviceRole(`${name}-node`, 'ec2.amazonaws.com', [POLICIES.eksWorkerNode, POLICIES.eksCni, POLICIES.ecrReadOnly], this);
    const nodeGroups = args.nodeGroups.map((group) => new aws.eks.NodeGroup(`${name}-${group.gpuType}`, {
      clusterName: cluster.name,
      nodeRoleArn: nodeRole.role.arn,
      subnetIds: args.subnetIds,
      instanceTypes: [instanceTypeFor(group.gpuType)],
      amiType: GPU_AMI_TYPE,
      diskSize: args.nodeDiskSizeGb ?? DEFAULT_NODE_DISK_SIZE_GB,
      scalingConfig: { minSize: group.minSize, desiredSize: group.desiredSize, maxSize: group.maxSize },
      labels: { [GPU_TYPE_LABEL]: group.gpuType },
      taints: [{ key: GPU_TAINT.key, value: GPU_TAINT.value, effect: EKS_TAINT_EFFECT[GPU_TAINT.effect] }],
    }, { parent: this, dependsOn: nodeRole.attachments }));

    this.clusterName = cluster.name;
    this.kubeconfig = pulumi.secret(pulumi.all([cluster.name, cluster.endpoint, cluster.certificateAuthority, cluster.arn])
      .apply(([clusterName, endpoint, ca, arn]) => eksKubeconfig({
        name: clusterName,
        endpoint,
        certificateAuthority: ca.data ?? '',
        region: arn.split(':')[3] ?? '',
      })));
    const provider = new k8s.Provider(`${name}-k8s`, { kubeconfig: this.kubeconfig }, { parent: this });
    nvidiaDevicePlugin(`${name}-nvidia-device-plugin`, { parent: this, provider });
    this.nodeGroupNames = pulumi.all(nodeGroups.map((g) => g.nodeGroupName));
    this.registerOutputs({ kubeconfig: this.kubeconfig, clusterName: this.clusterName, nodeGroupNames: this.nodeGroupNames });
  }
}

/** Each node group for a GPU type with a known instance type, and the rule of catalog/node-groups.ts. */
export function checkNodeGroups(groups: readonly NodeGroup<pulumi.Input<number>>[]): void {
  for (const { gpuType } of groups) instanceTypeFor(gpuType);
  const problem = nodeGroupsProblem(groups);
  if (problem) throw new StackArgsError(problem.message);
}
