import test from 'ava';
import * as pulumi from '@pulumi/pulumi';
import { GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import { awsState, mockPulumi, valueOf } from './mocks.ts';

const mocks = await mockPulumi(awsState);
const { default: program } = await import('../../stacks/index.ts');

// The mocked stack is named `test`; config is read when the program runs, so each test sets its own first.
const run = (config: Record<string, string>, secretKeys: string[] = []) => {
  pulumi.runtime.setAllConfig(config, secretKeys);
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

test('kiln:component kiln-on-kubernetes runs Kiln\'s processes from the stack config, its secrets read as secrets', async (t) => {
  const secrets = {
    'kiln:databaseUrl': 'postgres://kiln:pw@db:5432/kiln', 'kiln:signingKey': 's'.repeat(32), 'kiln:pulumiPassphrase': 'passphrase',
    'kiln:smtpUrl': 'smtp://mail:587', 'kiln:secretEnv': '{"STRIPE_SECRET_KEY":"sk_live_x"}',
  };
  const outputs = run({
    'kiln:component': 'kiln-on-kubernetes', 'kiln:name': 'kiln', 'kiln:namespace': 'kiln-system', 'kiln:image': 'registry.example.com/kiln:0.1.0',
    'kiln:replicas': '{"api":2,"worker":3,"gateway":4}', 'kiln:temporalAddress': 'temporal:7233', 'kiln:env': '{"KILN_PUBLIC_URL":"https://kiln.example.com"}',
    ...secrets,
  }, Object.keys(secrets));
  const replicas = await Promise.all(['api', 'worker', 'gateway'].map(async (p) => (await mocks.resource('kubernetes:apps/v1:Deployment', `kiln-${p}`)).inputs.spec.replicas));
  t.deepEqual(replicas, [2, 3, 4]);
  const secret = (await mocks.resource('kubernetes:core/v1:Secret', 'kiln-secrets')).inputs;
  t.deepEqual(Object.keys(secret.stringData.value).sort(), ['DATABASE_URL', 'KILN_SIGNING_KEY', 'PULUMI_CONFIG_PASSPHRASE', 'SMTP_URL', 'STRIPE_SECRET_KEY']);
  t.is(await valueOf(outputs.apiUrl!), 'http://kiln-api.kiln-system.svc.cluster.local');
  t.deepEqual(Object.keys(outputs).sort(), ['apiServiceName', 'apiUrl', 'gatewayServiceName', 'gatewayUrl', 'secretName']);
});

test('an unknown or missing component is refused with the choices', (t) => {
  t.throws(() => run({ 'kiln:component': 'ray-cluster' }), { message: 'kiln:component must be one of vllm-deployment, gpu-cluster, kiln-on-kubernetes; got "ray-cluster"' });
  t.throws(() => run({}), { message: /Missing required configuration variable 'kiln:component'/ });
});
