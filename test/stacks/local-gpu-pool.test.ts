// LocalGpuPool with Pulumi's engine mocked: the Node objects a pool declares (names, GPU label and taint, what kwok
// needs to manage them and count their GPUs) and the rules its arguments follow.
import test from 'ava';
import { GPU_TAINT, GPU_TYPE_LABEL } from '../../catalog/gpu-types.ts';
import { KILN_OBJECT_ANNOTATIONS } from '../../stacks/kiln-objects.ts';
import { mockPulumi, valueOf } from './mocks.ts';

const mocks = await mockPulumi();
const { LocalGpuPool, StackArgsError } = await import('../../stacks/local-gpu-pool/index.ts');

const L4 = { gpuType: 'nvidia-l4', gpusPerNode: 1, minSize: 1, desiredSize: 2, maxSize: 4 };
const rejects = (message: string | RegExp) => ({ instanceOf: StackArgsError, message });
const nodesOf = (pool: string) => mocks.ofType('kubernetes:core/v1:Node').filter((n) => n.inputs.metadata.labels['kiln.dev/node-pool'] === pool);

test('desiredSize Node objects named <pool>-<index>, with the GPU type label, GPU count and taint, managed by kwok', async (t) => {
  const pool = new LocalGpuPool('h100', { gpuType: 'nvidia-h100-80gb', gpusPerNode: 8, minSize: 0, desiredSize: 3, maxSize: 3 });
  t.deepEqual(await valueOf(pool.nodeNames), ['h100-0', 'h100-1', 'h100-2']);
  const node = (await mocks.resource('kubernetes:core/v1:Node', 'h100-1')).inputs;
  t.is(node.metadata.name, 'h100-1');
  t.like(node.metadata.labels, {
    [GPU_TYPE_LABEL]: 'nvidia-h100-80gb', 'nvidia.com/gpu.count': '8', 'kiln.dev/node-pool': 'h100', 'kubernetes.io/hostname': 'h100-1',
  });
  t.like(node.metadata.annotations, { 'kwok.x-k8s.io/node': 'fake', ...KILN_OBJECT_ANNOTATIONS });
  t.deepEqual(node.spec.taints, [GPU_TAINT]);
  t.is(node.status, undefined, 'kwok writes the status');
  t.is(nodesOf('h100').length, 3);
});

test('the nodes are named after args.name when given, and none are declared at desiredSize 0', async (t) => {
  const named = new LocalGpuPool('component', { ...L4, name: 'l4-pool' });
  t.deepEqual(await valueOf(named.nodeNames), ['l4-pool-0', 'l4-pool-1']);
  const idle = new LocalGpuPool('idle', { ...L4, minSize: 0, desiredSize: 0 });
  t.deepEqual(await valueOf(idle.nodeNames), []);
  t.is(nodesOf('idle').length, 0);
});

test('sizes are whole numbers with minSize <= desiredSize <= maxSize', (t) => {
  t.throws(() => new LocalGpuPool('over', { ...L4, desiredSize: 5 }), rejects('must satisfy minSize <= desiredSize <= maxSize, got 1 <= 5 <= 4'));
  t.throws(() => new LocalGpuPool('under', { ...L4, minSize: 3 }), rejects('must satisfy minSize <= desiredSize <= maxSize, got 3 <= 2 <= 4'));
  t.throws(() => new LocalGpuPool('half', { ...L4, desiredSize: 1.5 }), rejects('desiredSize must be a whole number from 0 to 1000, got 1.5'));
  t.throws(() => new LocalGpuPool('negative', { ...L4, minSize: -1 }), rejects('minSize must be a whole number from 0 to 1000, got -1'));
  t.throws(() => new LocalGpuPool('empty', { ...L4, minSize: 0, desiredSize: 0, maxSize: 0 }), rejects('maxSize must be a whole number from 1 to 1000, got 0'));
});

test('the GPU type is in the catalog, each node has GPUs, and the name makes valid node names', (t) => {
  t.throws(() => new LocalGpuPool('b200', { ...L4, gpuType: 'nvidia-b200' }), rejects(/^gpuType "nvidia-b200" is not in the GPU catalog: one of nvidia-h100-80gb, /));
  t.throws(() => new LocalGpuPool('no-gpus', { ...L4, gpusPerNode: 0 }), rejects('gpusPerNode must be a whole number from 1 to 16, got 0'));
  t.throws(() => new LocalGpuPool('L4', L4), rejects(/^name "L4" must be a DNS label/));
  // The longest name counts from the last node maxSize allows: 61 characters leave room for nodes -0 to -9.
  t.throws(() => new LocalGpuPool('long', { ...L4, name: 'p'.repeat(61), maxSize: 11 }), rejects(/node "p{61}-10" has at most 63 characters$/));
  t.notThrows(() => { new LocalGpuPool('long-ok', { ...L4, name: 'p'.repeat(61), maxSize: 10 }); });
});
