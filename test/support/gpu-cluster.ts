// A local GPU cluster for one test file, in a fresh folder: two 1-GPU L4 nodes and one 8-GPU H100 node
// unless the file asks for others; pods turn Ready 300 ms after they are placed, failing pods restart every
// second, and simulated vLLM servers answer on Ready vLLM pods' IPs.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGpuCluster, type GpuCluster, type GpuClusterOptions, type GpuNodePool } from '../../infra/servers/gpu-cluster.ts';
import type { PulumiSettings } from '../../workflows/pulumi/automation.ts';
import { testPulumiSettings } from './pulumi.ts';

export const TEST_NODE_POOLS: readonly GpuNodePool[] = [
  { gpuType: 'nvidia-l4', nodes: 2, gpusPerNode: 1 },
  { gpuType: 'nvidia-h100-80gb', nodes: 1, gpusPerNode: 8 },
];

export async function startTestGpuCluster(nodePools: readonly GpuNodePool[] = TEST_NODE_POOLS, options: Omit<Partial<GpuClusterOptions>, 'dataDir' | 'nodePools'> = {}): Promise<GpuCluster> {
  for (let attempt = 1; ; attempt++) {
    const dataDir = await mkdtemp(join(tmpdir(), 'kiln-cluster-'));
    try {
      const cluster = await startGpuCluster({ dataDir, nodePools, podReadyDelayMs: 300, crashLoopIntervalMs: 1000, ...options });
      // A stopped test cluster is not looked at again; its etcd alone holds 64 MB.
      return { ...cluster, stop: async () => { await cluster.stop(); await rm(dataDir, { recursive: true, force: true }); } };
    } catch (error) {
      await rm(dataDir, { recursive: true, force: true });
      // Its ports were free when picked, but test files start servers side by side: another process can bind
      // one before this cluster's server does. Free ports are picked again, twice at most.
      if (attempt < 3 && /address already in use/.test((error as Error).message)) continue;
      throw error;
    }
  }
}

/** What a file that applies stacks to the local cluster needs: the cluster, its kubeconfig's text, Pulumi settings of its own. */
export async function startStackTestCluster(prefix: string): Promise<{ cluster: GpuCluster; kubeconfig: string; settings: PulumiSettings }> {
  const [cluster, settings] = await Promise.all([startTestGpuCluster(), testPulumiSettings(prefix)]);
  return { cluster, kubeconfig: await readFile(cluster.kubeconfig, 'utf8'), settings };
}
