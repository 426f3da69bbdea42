import test from 'ava';
import * as pulumi from '@pulumi/pulumi';
import { parse } from 'yaml';
import { GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import { awsState, mockPulumi, valueOf } from './mocks.ts';

const mocks = await mockPulumi(awsState);
const { GpuCluster, StackArgsError, checkNodeGroups } = await import('../../stacks/gpu-cluster/index.ts');

const gpuCluster = new GpuCluster('kiln', {
  subnetIds: ['subnet-a', 'subnet-b'],
  kubernetesVersion: '1.33',
  nodeGroups: [
    { gpuType: 'nvidia-h100-80gb', minSize: 0, desiredSize: 1, maxSize: 4 },
    { gpuType: 'nvidia-l4', minSize: 1, desiredSize: 2, maxSize: 8 },
  ],
});

const nodeGroup = async (gpuType: string) => (await mocks.resource('aws:eks/nodeGroup:NodeGroup', `kiln-${gpuType}`)).inputs;

test('one managed node group per GPU type, on that type\'s instance type and the GPU AMI', async (t) => {
  const [h100, l4] = await Promise.all([nodeGroup('nvidia-h100-80gb'), nodeGroup('nvidia-l4')]);
  t.deepEqual(h100.instanceTypes, ['p5.48xlarge']);
  t.deepEqual(l4.instanceTypes, ['g6.xlarge']);
  for (const g of [h100, l4]) {
    t.is(g.amiType, 'AL2023_x86_64_NVIDIA');
    t.is(g.clusterName, 'kiln-eks-1a2b3c');
    t.is(g.nodeRoleArn, 'arn:aws:iam::123456789012:role/kiln-node-role');
    t.deepEqual(g.subnetIds, ['subnet-a', 'subnet-b']);
  }
  t.is(mocks.ofType('aws:eks/nodeGroup:NodeGroup').length, 2);
});

test('node groups carry the catalog GPU label and taint, and their scaling bounds', async (t) => {
  const [h100, l4] = await Promise.all([nodeGroup('nvidia-h100-80gb'), nodeGroup('nvidia-l4')]);
  t.deepEqual(h100.labels, { [GPU_TYPE_LABEL]: 'nvidia-h100-80gb' });
  t.deepEqual(l4.labels, { [GPU_TYPE_LABEL]: 'nvidia-l4' });
  t.deepEqual(h100.taints, [{ key: GPU_TAINT.key, value: GPU_TAINT.value, effect: 'NO_SCHEDULE' }]);
  t.deepEqual(h100.scalingConfig, { minSize: 0, desiredSize: 1, maxSize: 4 });
  t.deepEqual(l4.scalingConfig, { minSize: 1, desiredSize: 2, maxSize: 8 });
});

test('the EKS cluster runs under its own role with the cluster policy; nodes get the worker policies', async (t) => {
  const eks = (await mocks.resource('aws:eks/cluster:Cluster', 'kiln-eks')).inputs;
  t.is(eks.roleArn, 'arn:aws:iam::123456789012:role/kiln-cluster-role');
  t.is(eks.version, '1.33');
  t.deepEqual(eks.vpcConfig.subnetIds, ['subnet-a', 'subnet-b']);
  const clusterRole = (await mocks.resource('aws:iam/role:Role', 'kiln-cluster-role')).inputs;
  t.is(JSON.parse(clusterRole.assumeRolePolicy).Statement[0].Principal.Service, 'eks.amazonaws.com');
  const attached = (role: string) => mocks.ofType('aws:iam/rolePolicyAttachment:RolePolicyAttachment')
    .filter((a) => a.inputs.role === role).map((a) => a.inputs.policyArn.split('/').pop()).sort();
  t.deepEqual(attached('kiln-cluster-role'), ['AmazonEKSClusterPolicy']);
  t.deepEqual(attached('kiln-node-role'), ['AmazonEC2ContainerRegistryReadOnly', 'AmazonEKSWorkerNodePolicy', 'AmazonEKS_CNI_Policy']);
});

test('the NVIDIA device plugin runs on GPU nodes, through a provider built from the cluster kubeconfig', async (t) => {
  const plugin = await mocks.resource('kubernetes:apps/v1:DaemonSet', 'kiln-nvidia-device-plugin');
  const pod = plugin.inputs.spec.template.spec;
  t.is(plugin.inputs.metadata.namespace, 'kube-system');
  t.regex(pod.containers[0].image, /^nvcr\.io\/nvidia\/k8s-device-plugin:v\d+\.\d+\.\d+$/);
  t.deepEqual(pod.tolerations, [{ key: GPU_TAINT.key, operator: 'Exists', effect: GPU_TAINT.effect }]);
  t.deepEqual(pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
    [{ matchExpressions: [{ key: GPU_TYPE_LABEL, operator: 'Exists' }] }]);
  t.deepEqual(pod.volumes, [{ name: 'device-plugins', hostPath: { path: '/var/lib/kubelet/device-plugins' } }]);
  t.regex(plugin.provider ?? '', /pulumi:providers:kubernetes::kiln-k8s::/);
});

test('outputs: a secret kubeconfig that signs in through the AWS CLI, the cluster and node group names', async (t) => {
  t.true(await pulumi.isSecret(gpuCluster.kubeconfig));
  const kubeconfig = parse(await valueOf(gpuCluster.kubeconfig));
  t.deepEqual(kubeconfig.clusters[0].cluster, { server: 'https://ABC.gr7.us-west-2.eks.amazonaws.com', 'certificate-authority-data': 'Q0EgUEVN' });
  t.deepEqual(kubeconfig.users[0].user.exec.args, ['eks', 'get-token', '--cluster-name', 'kiln-eks-1a2b3c', '--region', 'us-west-2', '--output', 'json']);
  t.is(await valueOf(gpuCluster.clusterName), 'kiln-eks-1a2b3c');
  t.deepEqual(await valueOf(gpuCluster.nodeGroupNames), ['kiln-nvidia-h100-80gb', 'kiln-nvidia-l4']);
  const provider = await mocks.resource('pulumi:providers:kubernetes', 'kiln-k8s');
  // Secrets reach the provider wrapped, so the engine keeps them encrypted in state.
  t.is(provider.inputs.kubeconfig.value, await valueOf(gpuCluster.kubeconfig));
});

test('node groups must name known GPU types, each once, at least one', (t) => {
  t.notThrows(() => checkNodeGroups([{ gpuType: 'nvidia-t4', minSize: 0, desiredSize: 0, maxSize: 1 }]));
  t.throws(() => checkNodeGroups([]), { instanceOf: StackArgsError, message: 'a GPU cluster needs at least one node group' });
  t.throws(() => checkNodeGroups([{ gpuType: 'nvidia-b200', minSize: 0, desiredSize: 0, maxSize: 1 }]), { instanceOf: StackArgsError, message: /no EC2 instance type for GPU type "nvidia-b200"/ });
  const a10g = { gpuType: 'nvidia-a10g', minSize: 0, desiredSize: 0, maxSize: 1 };
  t.throws(() => checkNodeGroups([a10g, a10g]), { instanceOf: StackArgsError, message: 'GPU type "nvidia-a10g" has more than one node group' });
  // The API's size rule (catalog/node-groups.ts), wherever the sizes are already known.
  t.throws(() => checkNodeGroups([{ ...a10g, minSize: 2, desiredSize: 1 }]), { instanceOf: StackArgsError, message: 'must satisfy minSize <= desiredSize <= maxSize' });
  t.notThrows(() => checkNodeGroups([{ ...a10g, minSize: pulumi.output(2), desiredSize: 1 }]));
  t.throws(() => new GpuCluster('empty', { subnetIds: [], nodeGroups: [] }), { message: /at least one node group/ });
});
