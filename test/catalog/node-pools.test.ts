// planPoolGrowth: which pool grows for replicas that cannot be placed, by how many nodes, or why none can.
import test from 'ava';
import { planPoolGrowth } from '../../catalog/node-pools.ts';

const pool = (name: string, gpuType: string, desiredSize: number, maxSize: number, gpusPerNode = 1) => ({ name, gpuType, minSize: 0, desiredSize, maxSize, gpusPerNode });

test('the first pool of the type with room grows by the nodes the missing replicas need, at most to its maximum', (t) => {
  const pools = [pool('a100', 'nvidia-a100-80gb', 1, 4, 8), pool('l4-full', 'nvidia-l4', 2, 2), pool('l4', 'nvidia-l4', 1, 3)];
  t.deepEqual(planPoolGrowth(pools, 'nvidia-l4', 2, 1), { pool: 'l4', nodes: 2, reason: 'adding 2 nvidia-l4 nodes to pool l4' });
  t.deepEqual(planPoolGrowth(pools, 'nvidia-l4', 5, 1), { pool: 'l4', nodes: 2, reason: 'adding 2 nvidia-l4 nodes to pool l4' });
  // Two replicas of 4 GPUs share a node of 8.
  t.deepEqual(planPoolGrowth(pools, 'nvidia-a100-80gb', 3, 4), { pool: 'a100', nodes: 2, reason: 'adding 2 nvidia-a100-80gb nodes to pool a100' });
});

test('no pool grows when every pool of the type is at its maximum, or none has nodes big enough', (t) => {
  const pools = [pool('l4', 'nvidia-l4', 1, 1), pool('l4-b', 'nvidia-l4', 3, 3)];
  t.deepEqual(planPoolGrowth(pools, 'nvidia-l4', 2, 1), { reason: 'pool l4 is at its maximum of 1 node; pool l4-b is at its maximum of 3 nodes' });
  t.deepEqual(planPoolGrowth(pools, 'nvidia-l4', 1, 2), { reason: 'no node pool of the cluster has nvidia-l4 nodes of 2 GPUs or more' });
  t.deepEqual(planPoolGrowth(pools, 'nvidia-h100-80gb', 1, 1), { reason: 'no node pool of the cluster has nvidia-h100-80gb nodes of 1 GPU or more' });
});
