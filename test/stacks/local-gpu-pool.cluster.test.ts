// LocalGpuPool run by the real Pulumi engine (Automation API, inline program, file backend) through the real
// Kubernetes provider plugin against Kiln's local cluster, started with no nodes of its own: the pool's Node objects
// become Ready GPU nodes through kwok alone (their capacity from the node's labels), a GPU pod is placed on one, a new
// desiredSize adds or removes nodes at the end of the pool, and destroy removes them.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import * as k8s from '@pulumi/kubernetes';
import type { Stack } from '@pulumi/pulumi/automation/index.js';
import { GPU_RESOURCE, GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import type { GpuCluster } from '../../infra/servers/gpu-cluster.ts';
import { LocalGpuPool, NODE_POOL_LABEL } from '../../stacks/local-gpu-pool/index.ts';
import { openStack, type PulumiSettings } from '../../workflows/pulumi/automation.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGpuCluster } from '../support/gpu-cluster.ts';
import { testPulumiSettings } from '../support/pulumi.ts';

let cluster: GpuCluster;
let kubeconfig: string;
let settings: PulumiSettings;

test.before(async () => {
  [cluster, settings] = await Promise.all([startTestGpuCluster([]), testPulumiSettings('local-gpu-pool')]);
  kubeconfig = await readFile(cluster.kubeconfig, 'utf8');
});
test.after.always(() => cluster?.stop());

async function stackOf(desiredSize: number): Promise<Stack> {
  return openStack(settings, {
    project: 'local-gpu-pool',
    stackName: 'l4',
    program: async () => {
      const pool = new LocalGpuPool('l4', { gpuType: 'nvidia-l4', gpusPerNode: 1, minSize: 1, desiredSize, maxSize: 4 }, {
        provider: new k8s.Provider('cluster', { kubeconfig }),
      });
      return { nodeNames: pool.nodeNames };
    },
  });
}
async function up(desiredSize: number): Promise<string[]> {
  const result = await (await stackOf(desiredSize)).up();
  if (result.summary.result !== 'succeeded') throw new Error(`up: ${result.summary.result}`);
  return result.outputs.nodeNames!.value as string[];
}

interface Node {
  metadata: { name: string; uid: string; labels: Record<string, string> };
  spec: { taints?: { key: string; value?: string; effect: string }[] };
  status?: { allocatable?: Record<string, string>; capacity?: Record<string, string>; conditions?: { type: string; status: string }[] };
}
const poolNodes = async () => (await cluster.api.get<{ items: Node[] }>(`/api/v1/nodes?labelSelector=${encodeURIComponent(`${NODE_POOL_LABEL}=l4`)}`)).items;
// Ready, and the node lifecycle controller has lifted its not-ready taint: only then does the scheduler use the node.
const isSchedulable = (n: Node) => (n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false)
  && (n.spec.taints ?? []).every((taint) => taint.key === GPU_TAINT.key);
/** The pool's nodes, by name, once there are `names` and every one is schedulable. */
const schedulableNodes = (names: string[]) => eventually(`nodes ${names.join(', ')} schedulable`, async () => {
  const nodes = await poolNodes();
  return nodes.map((n) => n.metadata.name).sort().join() === names.join() && nodes.every(isSchedulable) ? nodes : undefined;
});

test.serial('a pool of 2 L4 nodes: two Ready nodes, each with 1 allocatable GPU, its GPU type label and taint; a GPU pod is placed on one', async (t) => {
  t.deepEqual(await up(2), ['l4-0', 'l4-1']);
  const nodes = await schedulableNodes(['l4-0', 'l4-1']);
  for (const node of nodes) {
    t.is(node.status!.allocatable![GPU_RESOURCE], '1', node.metadata.name);
    t.is(node.status!.capacity![GPU_RESOURCE], '1', node.metadata.name);
    t.is(node.metadata.labels[GPU_TYPE_LABEL], 'nvidia-l4');
    t.deepEqual(node.spec.taints, [GPU_TAINT]);
  }

  await cluster.api.request('POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'needs-a-gpu' },
    spec: {
      nodeSelector: { [GPU_TYPE_LABEL]: 'nvidia-l4' },
      tolerations: [{ key: GPU_TAINT.key, operator: 'Exists', effect: GPU_TAINT.effect }],
      containers: [{ name: 'main', image: 'vllm/vllm-openai', resources: { limits: { [GPU_RESOURCE]: '1' } } }],
    },
  });
  const nodeName = await eventually('the GPU pod placed', async () =>
    (await cluster.api.get<{ spec: { nodeName?: string } }>('/api/v1/namespaces/default/pods/needs-a-gpu')).spec.nodeName);
  t.true(['l4-0', 'l4-1'].includes(nodeName));
  await cluster.api.request('DELETE', '/api/v1/namespaces/default/pods/needs-a-gpu?gracePeriodSeconds=0');
});

test.serial('resized to 3, node l4-2 is added and the others stay; resized to 1, l4-1 and l4-2 go', async (t) => {
  const uid = async (name: string) => (await poolNodes()).find((n) => n.metadata.name === name)?.metadata.uid;
  const first = await uid('l4-0');

  t.deepEqual(await up(3), ['l4-0', 'l4-1', 'l4-2']);
  const nodes = await schedulableNodes(['l4-0', 'l4-1', 'l4-2']);
  t.is(nodes.find((n) => n.metadata.name === 'l4-2')!.status!.allocatable![GPU_RESOURCE], '1');
  t.is(await uid('l4-0'), first, 'l4-0 is the same Node object');

  t.deepEqual(await up(1), ['l4-0']);
  t.deepEqual((await poolNodes()).map((n) => n.metadata.name), ['l4-0']);
  t.is(await uid('l4-0'), first);
});

test.serial('destroy removes the pool\'s nodes', async (t) => {
  t.is((await (await stackOf(1)).destroy()).summary.result, 'succeeded');
  t.deepEqual(await poolNodes(), []);
});
