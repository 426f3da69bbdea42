import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import test from 'ava';
import { eksKubeconfig } from '../../stacks/gpu-cluster/kubeconfig.ts';
import { GPU_RESOURCE, GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import { startGpuCluster, type GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';
import { credentialsFromKubeconfig, kubeApi, parseKubeconfig } from '../../lib/kubernetes/api.ts';
import { eventually } from '../support/eventually.ts';

interface Pod {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status: { phase?: string; podIP?: string; hostIP?: string; conditions?: { type: string; status: string; reason?: string }[] };
}

let cluster: GpuCluster;
test.before(async () => {
  cluster = await startTestGpuCluster();
});
test.after.always(() => cluster?.stop());

function gpuDeployment(name: string, gpuType: string, gpus: number, replicas = 1) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          nodeSelector: { [GPU_TYPE_LABEL]: gpuType },
          tolerations: [{ key: GPU_TAINT.key, operator: 'Exists', effect: GPU_TAINT.effect }],
          containers: [{ name: 'vllm', image: 'vllm/vllm-openai:latest', resources: { limits: { [GPU_RESOURCE]: String(gpus) } } }],
        },
      },
    },
  };
}

async function podsOf(app: string): Promise<Pod[]> {
  return (await cluster.api.get<{ items: Pod[] }>(`/api/v1/namespaces/default/pods?labelSelector=app%3D${app}`)).items;
}


const isReady = (pod: Pod) => pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

test.serial('simulated GPU nodes advertise their GPUs, type label and taint', async (t) => {
  const nodes = await cluster.api.get<{ items: { metadata: { labels: Record<string, string> }; spec: { taints?: unknown[] }; status: { allocatable: Record<string, string> } }[] }>('/api/v1/nodes');
  const l4 = nodes.items.filter((n) => n.metadata.labels[GPU_TYPE_LABEL] === 'nvidia-l4');
  const h100 = nodes.items.filter((n) => n.metadata.labels[GPU_TYPE_LABEL] === 'nvidia-h100-80gb');
  t.is(l4.length, 2);
  t.is(h100.length, 1);
  t.is(h100[0]!.status.allocatable[GPU_RESOURCE], '8');
  t.deepEqual(l4[0]!.spec.taints, [GPU_TAINT]);
});

test.serial('a pod asking for an L4 GPU is scheduled onto an L4 node and turns Ready; deleting removes it', async (t) => {
  await cluster.api.request('POST', '/apis/apps/v1/namespaces/default/deployments', gpuDeployment('l4-model', 'nvidia-l4', 1));
  const pod = await eventually('a Ready pod', async () => (await podsOf('l4-model')).find(isReady));
  t.regex(pod.spec.nodeName ?? '', /^gpu-nvidia-l4-\d$/);
  t.is(pod.status.phase, 'Running');
  // Loopback only: the pod's IP is in this cluster's own 127.N.0.0/16, its node's address is 127.0.0.1.
  t.regex(cluster.podCidr, /^127\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.0\.0\/16$/);
  t.true(pod.status.podIP?.startsWith(cluster.podCidr.replace('0.0/16', '')), `${pod.status.podIP} in ${cluster.podCidr}`);
  t.is(pod.status.hostIP, '127.0.0.1');

  await cluster.api.request('DELETE', '/apis/apps/v1/namespaces/default/deployments/l4-model?propagationPolicy=Foreground');
  await eventually('the pods to be gone', async () => ((await podsOf('l4-model')).length === 0 ? true : undefined));
  t.pass();
});

test.serial('the scheduler refuses more GPUs than the cluster has: the extra replica stays Pending', async (t) => {
  // Two L4 nodes with one GPU each: the third replica has nowhere to go.
  await cluster.api.request('POST', '/apis/apps/v1/namespaces/default/deployments', gpuDeployment('too-big', 'nvidia-l4', 1, 3));
  const pods = await eventually('two Ready pods and one unschedulable', async () => {
    const all = await podsOf('too-big');
    const unschedulable = all.filter((p) => p.status.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'));
    return all.filter(isReady).length === 2 && unschedulable.length === 1 ? all : undefined;
  });
  t.is(new Set(pods.filter(isReady).map((p) => p.spec.nodeName)).size, 2, 'one replica per L4 node');
  await cluster.api.request('DELETE', '/apis/apps/v1/namespaces/default/deployments/too-big');
});

test('a pod IP range is held by one cluster at a time: another cluster asking for it is refused before it starts', async (t) => {
  const taken = Number(cluster.podCidr.split('.')[1]);
  await t.throwsAsync(startGpuCluster({ dataDir: await mkdtemp(join(tmpdir(), 'kiln-cluster-')), podNetwork: taken }), { message: /held by another local cluster/ });
  await t.throwsAsync(startGpuCluster({ dataDir: await mkdtemp(join(tmpdir(), 'kiln-cluster-')), podNetwork: 10 }), { message: /podNetwork must be an integer from 64 to 127/ });
});

test.serial('the written kubeconfig gives access to the cluster', async (t) => {
  const api = kubeApi(await credentialsFromKubeconfig(cluster.kubeconfig));
  t.is(await api.get<string>('/readyz'), 'ok');
});

test.serial('an EKS kubeconfig (the gpu-cluster stack\'s) signs in with a token from `aws eks get-token`, fetched once while valid', async (t) => {
  // A stand-in for the AWS CLI (no AWS here): it logs its arguments and prints an ExecCredential holding
  // this cluster's token, as `aws eks get-token` prints a token STS vouches for.
  const { server, ca, token } = await credentialsFromKubeconfig(cluster.kubeconfig);
  const bin = await mkdtemp(join(tmpdir(), 'kiln-aws-'));
  const calls = join(bin, 'calls.log');
  const expires = new Date(Date.now() + 14 * 60_000).toISOString();
  await writeFile(join(bin, 'aws'), `#!/bin/sh\necho "$* AWS_PROFILE=$AWS_PROFILE" >> '${calls}'\n`
    + `echo '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{},"status":{"expirationTimestamp":"${expires}","token":"${token}"}}'\n`);
  await chmod(join(bin, 'aws'), 0o755);
  const kubeconfig = eksKubeconfig({ name: 'kiln-eks-test', endpoint: server, certificateAuthority: Buffer.from(ca).toString('base64'), region: 'us-west-2' });
  const path = process.env.PATH;
  process.env.PATH = `${bin}${delimiter}${path}`;
  try {
    const api = kubeApi(parseKubeconfig(kubeconfig));
    t.is(await api.get<string>('/readyz'), 'ok');
    const nodes = await api.get<{ items: unknown[] }>('/api/v1/nodes');
    t.is(nodes.items.length, 3);
    t.deepEqual((await readFile(calls, 'utf8')).trim().split('\n'), ['eks get-token --cluster-name kiln-eks-test --output json --region us-west-2 AWS_PROFILE='], 'one run of the CLI for both requests');
  } finally {
    process.env.PATH = path;
  }
});

test('a kubeconfig naming any other command is refused, never run', (t) => {
  const named = (exec: Record<string, unknown>) => `
apiVersion: v1
current-context: c
clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:1', certificate-authority-data: ${Buffer.from('ca').toString('base64')} } }]
contexts: [{ name: c, context: { cluster: c, user: u } }]
users: [{ name: u, user: { exec: ${JSON.stringify(exec)} } }]
`;
  for (const exec of [
    { command: 'sh', args: ['-c', 'touch /tmp/owned'] },
    { command: '/usr/local/bin/aws', args: ['eks', 'get-token', '--cluster-name', 'x'] },
    { command: 'aws', args: ['s3', 'cp', 's3://bucket/x', '/tmp/x'] },
    { command: 'aws', args: ['eks', 'get-token', '--cluster-name', 'x', '--endpoint-url', 'https://evil.example'] },
    { command: 'aws', args: ['eks', 'get-token', '--region', 'us-east-1'] },
    { command: 'aws', args: ['eks', 'get-token', '--cluster-name', 'x'], env: [{ name: 'LD_PRELOAD', value: '/tmp/x.so' }] },
  ]) {
    t.throws(() => parseKubeconfig(named(exec)), { message: /the only command a kubeconfig may run is `aws eks get-token`/ }, JSON.stringify(exec));
  }
  t.like(parseKubeconfig(named({ command: 'aws', args: ['eks', 'get-token', '--cluster-name', 'x', '--role-arn', 'arn:aws:iam::1:role/r'], env: [{ name: 'AWS_PROFILE', value: 'ops' }] })), {
    awsEks: { clusterName: 'x', roleArn: 'arn:aws:iam::1:role/r', profile: 'ops' },
  });
});
