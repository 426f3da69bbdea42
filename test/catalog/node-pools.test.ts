// planPoolGrowth: which pool grows for replicas that cannot be placed, by how many nodes, or why none can; and
// forecastPoolGrowth, the dry run's forecast of the rounds a rollout would ask it for.
import test from 'ava';
import { forecastPoolGrowth, growablePools, planPoolGrowth, planPoolShrink } from '../../catalog/node-pools.ts';

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

test('the forecast: the growths a rollout would ask for, round after round, with what the added nodes cost per hour', (t) => {
  const pools = [pool('a100', 'nvidia-a100-80gb', 1, 4, 8), pool('l4-a', 'nvidia-l4', 1, 2), pool('l4-b', 'nvidia-l4', 0, 3, 2)];
  // Nothing missing: nothing grows.
  t.deepEqual(forecastPoolGrowth(pools, 'nvidia-l4', 0, 1), { steps: [], unplaced: 0, reason: '' });
  // One round: l4-a takes the one missing replica (an L4 at 80 cents an hour).
  t.deepEqual(forecastPoolGrowth(pools, 'nvidia-l4', 1, 1), {
    steps: [{ pool: 'l4-a', label: 'pool l4-a', gpuType: 'nvidia-l4', gpusPerNode: 1, fromNodes: 1, nodes: 1, exactHourlyCents: 80 }], unplaced: 0, reason: 'adding 1 nvidia-l4 node to pool l4-a',
  });
  // Two rounds: l4-a grows to its maximum, then l4-b's nodes of 2 GPUs take two replicas each.
  t.deepEqual(forecastPoolGrowth(pools, 'nvidia-l4', 4, 1), {
    steps: [
      { pool: 'l4-a', label: 'pool l4-a', gpuType: 'nvidia-l4', gpusPerNode: 1, fromNodes: 1, nodes: 1, exactHourlyCents: 80 },
      { pool: 'l4-b', label: 'pool l4-b', gpuType: 'nvidia-l4', gpusPerNode: 2, fromNodes: 0, nodes: 2, exactHourlyCents: 320 },
    ],
    unplaced: 0, reason: 'adding 1 nvidia-l4 node to pool l4-a, then adding 2 nvidia-l4 nodes to pool l4-b',
  });
  // More than every pool's maximum: the growths still made, what is left, and why nothing grows further.
  t.like(forecastPoolGrowth(pools, 'nvidia-l4', 9, 1), { unplaced: 2, reason: 'pool l4-a is at its maximum of 2 nodes; pool l4-b is at its maximum of 3 nodes' });
  t.deepEqual(forecastPoolGrowth(pools, 'nvidia-l4', 9, 1).steps.map((s) => s.nodes), [1, 3]);
  // Three replicas of 4 A100s on nodes of 8: two nodes, at 8 x 280 cents each.
  t.like(forecastPoolGrowth(pools, 'nvidia-a100-80gb', 3, 4), { steps: [{ pool: 'a100', nodes: 2, exactHourlyCents: 4480 }], unplaced: 0 });
  // An aws cluster's node groups grow by the same rule: named by GPU type, their instance type's GPUs per node (8 on p4de).
  const groups = growablePools({ nodeGroups: [{ gpuType: 'nvidia-a100-80gb', minSize: 0, desiredSize: 1, maxSize: 2 }, { gpuType: 'nvidia-l4', minSize: 1, desiredSize: 2, maxSize: 2 }] });
  t.like(forecastPoolGrowth(groups, 'nvidia-a100-80gb', 3, 4), { steps: [{ pool: 'nvidia-a100-80gb', label: 'node group nvidia-a100-80gb', gpusPerNode: 8, fromNodes: 1, nodes: 1 }], unplaced: 1, reason: 'node group nvidia-a100-80gb is at its maximum of 2 nodes' });
  t.deepEqual(planPoolGrowth(groups, 'nvidia-l4', 1, 1), { reason: 'node group nvidia-l4 is at its maximum of 2 nodes' });
  // No pool of the size: nothing grows, and the reason is planPoolGrowth's.
  t.deepEqual(forecastPoolGrowth(pools, 'nvidia-l4', 1, 4), { steps: [], unplaced: 1, reason: 'no node pool of the cluster has nvidia-l4 nodes of 4 GPUs or more' });
});

// planPoolShrink: which idle nodes leave a pool (from the top, down to its minimum), or none.
const l4 = { name: 'l4', gpuType: 'nvidia-l4', minSize: 1, desiredSize: 4, maxSize: 6, gpusPerNode: 1 };

test('the idle top nodes of a pool leave it, down to its minimum', (t) => {
  t.deepEqual(planPoolShrink([l4], new Set(['l4-0', 'l4-1', 'l4-2', 'l4-3'])), {
    pool: 'l4', nodes: ['l4-3', 'l4-2', 'l4-1'], size: 1, reason: 'removing 3 idle nvidia-l4 nodes from pool l4 (l4-3, l4-2, l4-1), 1 left',
  });
  t.like(planPoolShrink([l4], new Set(['l4-3'])), { pool: 'l4', nodes: ['l4-3'], size: 3 });
});

test('a busy node is never removed, nor an idle one below it; a pool at its minimum keeps its nodes', (t) => {
  t.deepEqual(planPoolShrink([l4], new Set(['l4-1', 'l4-2'])), {}, 'l4-3 is busy');
  t.like(planPoolShrink([l4], new Set(['l4-1', 'l4-3'])), { nodes: ['l4-3'], size: 3 }, 'l4-2 is busy: l4-1 stays');
  t.deepEqual(planPoolShrink([{ ...l4, desiredSize: 1 }], new Set(['l4-0'])), {});
  t.like(planPoolShrink([{ ...l4, minSize: 0, desiredSize: 1 }], new Set(['l4-0'])), { nodes: ['l4-0'], size: 0 });
});

test('the first pool with idle top nodes shrinks; other pools\' nodes do not count', (t) => {
  const h100 = { name: 'h100', gpuType: 'nvidia-h100-80gb', minSize: 0, desiredSize: 2, maxSize: 2, gpusPerNode: 8 };
  t.like(planPoolShrink([l4, h100], new Set(['h100-1', 'l4-9'])), { pool: 'h100', nodes: ['h100-1'], size: 1 });
});
