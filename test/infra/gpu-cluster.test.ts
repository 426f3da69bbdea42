import test from 'ava';
import { GPU_RESOURCE, GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';
import { credentialsFromKubeconfig, kubeApi } from '../../infra/servers/kube-api.ts';
import { eventually } from '../support/eventually.ts';

interface Pod {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status: { phase?: string; conditions?: { type: string; status: string; reason?: string }[] };
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

test.serial('the written kubeconfig gives access to the cluster', async (t) => {
  const api = kubeApi(await credentialsFromKubeconfig(cluster.kubeconfig));
  t.is(await api.get<string>('/readyz'), 'ok');
});
