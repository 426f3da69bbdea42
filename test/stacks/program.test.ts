import test from 'ava';
import * as pulumi from '@pulumi/pulumi';
import { GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import { awsState, mockPulumi, valueOf } from './mocks.ts';

const mocks = await mockPulumi(awsState);
const { default: program } = await import('../../stacks/index.ts');

// The mocked stack is named `test`; config is read when the program runs, so each test sets its own first.
const run = (config: Record<string, string>) => {
  pulumi.runtime.setAllConfig(config);
  return program();
};

test('kiln:component vllm-deployment builds a VllmDeployment from the stack config', async (t) => {
  const outputs = run({
    'kiln:component': 'vllm-deployment', 'kiln:name': 'qwen', 'kiln:namespace': 'models', 'kiln:model': 'Qwen/Qwen2.5-7B-Instruct',
    'kiln:gpuType': 'nvidia-a10g', 'kiln:gpusPerReplica': '2', 'kiln:replicas': '2', 'kiln:maxReplicas': '4', 'kiln:extraArgs': '["--enforce-eager"]',
  });
  const d = (await mocks.resource('kubernetes:apps/v1:Deployment', 'qwen-deployment')).inputs;
  const pod = d.spec.template.spec;
  t.deepEqual(pod.containers[0].args, ['--model', 'Qwen/Qwen2.5-7B-Instruct', '--tensor-parallel-size', '2', '--port', '8000', '--enforce-eager']);
  t.deepEqual(pod.nodeSelector, { [GPU_TYPE_LABEL]: 'nvidia-a10g' });
  t.is(d.spec.replicas, 2);
  t.is(await valueOf(outputs.serviceUrl!), 'http://qwen.models.svc.cluster.local');
});

test('kiln:horizontalPodAutoscaler hands the replica count to an autoscaler between the bounds', async (t) => {
  run({
    'kiln:component': 'vllm-deployment', 'kiln:name': 'auto', 'kiln:model': 'Qwen/Qwen2.5-7B-Instruct', 'kiln:gpuType': 'nvidia-l4',
    'kiln:replicas': '2', 'kiln:maxReplicas': '4', 'kiln:horizontalPodAutoscaler': 'true',
  });
  const hpa = (await mocks.resource('kubernetes:autoscaling/v2:HorizontalPodAutoscaler', 'auto-hpa')).inputs;
  t.deepEqual([hpa.spec.minReplicas, hpa.spec.maxReplicas], [2, 4]);
  // The Deployment starts at the lower bound; from then on the autoscaler sets the count (ignoreChanges, tested on the cluster).
  t.is((await mocks.resource('kubernetes:apps/v1:Deployment', 'auto-deployment')).inputs.spec.replicas, 2);
});

test('kiln:component gpu-cluster builds a GpuCluster named after the stack', async (t) => {
  const outputs = run({
    'kiln:component': 'gpu-cluster', 'kiln:subnetIds': '["subnet-a","subnet-b"]',
    'kiln:nodeGroups': '[{"gpuType":"nvidia-t4","minSize":0,"desiredSize":1,"maxSize":3}]',
  });
  const group = (await mocks.resource('aws:eks/nodeGroup:NodeGroup', 'test-nvidia-t4')).inputs;
  t.deepEqual(group.instanceTypes, ['g4dn.xlarge']);
  t.deepEqual(group.scalingConfig, { minSize: 0, desiredSize: 1, maxSize: 3 });
  t.deepEqual(Object.keys(outputs).sort(), ['clusterName', 'kubeconfig', 'nodeGroupNames']);
});

test('an unknown or missing component is refused with the choices', (t) => {
  t.throws(() => run({ 'kiln:component': 'ray-cluster' }), { message: 'kiln:component must be one of vllm-deployment, gpu-cluster; got "ray-cluster"' });
  t.throws(() => run({}), { message: /Missing required configuration variable 'kiln:component'/ });
});
