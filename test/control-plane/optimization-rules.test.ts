// The optimization rules (catalog/optimization-rules.ts) with chosen figures: what each measured load
// recommends, the evidence and effect each recommendation carries, how the policy's targets bound them, and
// which of them auto-apply takes.
// The figures come from Prometheus in service; here they are given.
import test from 'ava';
import { MIN_REPLICAS } from '../../catalog/deployment-rules.ts';
import { findCatalogModel } from '../../catalog/models.ts';
import { autoApplicable, recommend, type DeploymentShape, type GpuAlternative, type MeasuredLoad, type OptimizationTargets } from '../../catalog/optimization-rules.ts';

const llama = findCatalogModel('meta-llama/Llama-3.1-8B-Instruct')!;
const l4: DeploymentShape = { gpu: 'nvidia-l4', gpusPerReplica: 1, replicas: 3, minReplicas: 1, maxReplicas: 3, contextLength: 8192, dtype: 'auto' };
const noTargets: OptimizationTargets = { targetP95TimeToFirstTokenMs: null, maxHourlyCents: null };
const quiet: MeasuredLoad = {
  from: '2026-11-24T03:00:00.000Z', to: '2026-11-24T04:00:00.000Z', windowSeconds: 3600,
  requestsPerSecond: 2, generationTokensPerSecond: 150, requestsRunningAvg: 3, requestsRunningMax: 6, requestsWaitingAvg: 0, requestsWaitingMax: 0,
  kvCacheUsageMax: 0.5, kvCacheUsageAvg: 0.3, readyReplicasAvg: 3, p95TimeToFirstTokenSeconds: 0.2,
};
const run = (load: Partial<MeasuredLoad>, deployment: Partial<DeploymentShape> = {}, targets: Partial<OptimizationTargets> = {}, alternatives: GpuAlternative[] = []) =>
  recommend({ deployment: { ...l4, ...deployment }, load: { ...quiet, ...load }, targets: { ...noTargets, ...targets }, facts: llama, alternatives });
const kinds = (list: ReturnType<typeof recommend>) => list.map((r) => r.id);

test('idle replicas: scale to zero when a bound of 0 is allowed, else down to the fewest; the evidence names the window and figures', (t) => {
  const [first, ...rest] = run({ requestsPerSecond: 0, requestsRunningMax: 0, requestsRunningAvg: 0, kvCacheUsageMax: 0, kvCacheUsageAvg: 0 });
  t.deepEqual(rest, []);
  if ((MIN_REPLICAS as number) === 0) {
    t.like(first, { id: 'scale-to-zero', change: { replicas: 0, minReplicas: 0 }, effect: { hourlyCentsNow: 240, hourlyCentsAfter: 0, hourlyCentsChange: -240, latency: { direction: 'higher' } } });
  } else {
    t.like(first, { id: 'fewer-replicas', change: { replicas: MIN_REPLICAS }, effect: { hourlyCentsNow: 240, hourlyCentsAfter: 80 * MIN_REPLICAS } });
  }
  t.deepEqual(first!.evidence.window, { from: quiet.from, to: quiet.to, seconds: 3600 });
  t.like(first!.evidence.figures, { requestsPerSecond: 0, requestsRunningMax: 0, replicas: 3, hourlyCents: 240 });
  t.deepEqual(run({ requestsPerSecond: 0, requestsRunningMax: 0 }, { replicas: 0 }), [], 'nothing for a deployment holding no replicas');
});

test('a long queue: more replicas for the waiting requests at today\'s concurrency, maxReplicas raised with them; the cost ceiling bounds them', (t) => {
  const load = { requestsWaitingAvg: 6, requestsWaitingMax: 12, requestsRunningAvg: 12, readyReplicasAvg: 3, kvCacheUsageMax: 0.6, p95TimeToFirstTokenSeconds: 1.5 };
  const [more] = run(load);
  // 4 requests run on each replica; 6 waiting need 2 more replicas.
  t.like(more, { id: 'more-replicas', change: { replicas: 5, maxReplicas: 5 }, effect: { hourlyCentsNow: 240, hourlyCentsAfter: 400, hourlyCentsChange: 160, latency: { direction: 'lower' } } });
  t.like(more!.evidence.figures, { requestsWaitingAvg: 6, requestsRunningAvg: 12 });
  t.like(run(load, {}, { maxHourlyCents: 320 })[0], { id: 'more-replicas', change: { replicas: 4 }, effect: { hourlyCentsAfter: 320 } });
  t.false(kinds(run(load, {}, { maxHourlyCents: 300 })).includes('more-replicas'), 'no replica fits under the ceiling');
  t.false(kinds(run(load)).includes('fewer-replicas'));
  t.false(kinds(run(load)).includes('cheaper-gpu'));
});

test('p95 time to first token above the target: a queue of any length asks for more replicas, and no fewer replicas are recommended', (t) => {
  const load = { requestsWaitingAvg: 0.5, requestsWaitingMax: 2, kvCacheUsageMax: 0.2, p95TimeToFirstTokenSeconds: 2 };
  t.true(kinds(run(load, {}, { targetP95TimeToFirstTokenMs: 1000 })).includes('more-replicas'));
  t.false(kinds(run(load)).includes('more-replicas'), 'without a target half a request waiting is no long queue');
  t.false(kinds(run({ kvCacheUsageMax: 0.2, p95TimeToFirstTokenSeconds: 2 }, {}, { targetP95TimeToFirstTokenMs: 1000 })).includes('fewer-replicas'));
});

test('underused replicas: as few as keep the peak KV-cache use at the target use', (t) => {
  const list = run({ kvCacheUsageMax: 0.2 }, { replicas: 4, maxReplicas: 4 });
  // 4 x 20% = 80% of one replica's cache: 2 replicas keep it at 40%, below 70%.
  t.like(list.find((r) => r.id === 'fewer-replicas'), { change: { replicas: 2 }, effect: { hourlyCentsNow: 320, hourlyCentsAfter: 160, hourlyCentsChange: -160, latency: { direction: 'higher' } } });
  t.false(kinds(run({ kvCacheUsageMax: 0.6 })).includes('fewer-replicas'), 'at 60% the load needs its 3 replicas');
  t.false(kinds(run({ kvCacheUsageMax: 0.2, requestsWaitingMax: 1 })).includes('fewer-replicas'), 'nothing removed while requests wait');
});

test('KV-cache pressure: a larger GPU whose cache holds the peak at the target use, or half the context length', (t) => {
  const list = run({ kvCacheUsageMax: 0.95 });
  const larger = list.find((r) => r.id === 'larger-gpu')!;
  t.like(larger, { change: { gpu: 'nvidia-a100-80gb', gpusPerReplica: 1, contextLength: 8192 }, effect: { hourlyCentsNow: 240, hourlyCentsAfter: 840, latency: { direction: 'lower' } } });
  t.like(list.find((r) => r.id === 'shorter-context'), { change: { contextLength: 4096 }, effect: { hourlyCentsChange: 0, latency: { direction: 'lower' } } });
  t.false(kinds(run({ kvCacheUsageMax: 0.95 }, {}, { maxHourlyCents: 500 })).includes('larger-gpu'), 'the larger GPU costs more than the ceiling');
  t.false(kinds(run({ kvCacheUsageMax: 0.95 }, { contextLength: 1024 })).includes('shorter-context'));
});

test('a cheaper GPU type that fits with headroom: the cheapest whose cache holds the peak at the target use, with its decode speed', (t) => {
  const h100 = { gpu: 'nvidia-h100-80gb', replicas: 1, maxReplicas: 1 };
  const alternatives: GpuAlternative[] = [
    { gpu: 'nvidia-l4', fits: true, available: true, gpusPerReplica: 1, hourlyCents: 80 },
    { gpu: 'nvidia-a100-80gb', fits: true, available: true, gpusPerReplica: 1, hourlyCents: 280 },
    { gpu: 'nvidia-t4', fits: false, available: true, gpusPerReplica: null, hourlyCents: null },
  ];
  // 10% of the H100's 55.5 GB is 5.6 GB: at 70% it needs 7.9 GB, more than an L4 leaves (5.1 GB).
  const cheaper = run({ kvCacheUsageMax: 0.1 }, h100, {}, alternatives).find((r) => r.id === 'cheaper-gpu')!;
  t.like(cheaper, { change: { gpu: 'nvidia-a100-80gb', gpusPerReplica: 1 }, effect: { hourlyCentsNow: 450, hourlyCentsAfter: 280, hourlyCentsChange: -170, latency: { direction: 'higher' } } });
  t.regex(cheaper.effect.latency.reason, /2039 GB\/s .* against 3350 GB\/s/);
  t.like(run({ kvCacheUsageMax: 0.05 }, h100, {}, alternatives).find((r) => r.id === 'cheaper-gpu'), { change: { gpu: 'nvidia-l4' }, effect: { hourlyCentsAfter: 80 } });
  t.false(kinds(run({ kvCacheUsageMax: 0.1, p95TimeToFirstTokenSeconds: 2 }, h100, { targetP95TimeToFirstTokenMs: 1000 }, alternatives)).includes('cheaper-gpu'),
    'no slower GPU while latency is above its target');
  // A GPU type no cluster offers is never the way out: the L4 gone, the A100 is the cheaper move.
  const noL4 = alternatives.map((a) => (a.gpu === 'nvidia-l4' ? { ...a, available: false } : a));
  t.like(run({ kvCacheUsageMax: 0.05 }, h100, {}, noL4).find((r) => r.id === 'cheaper-gpu'), { change: { gpu: 'nvidia-a100-80gb' } });
});

test('a larger GPU is recommended only among the types some cluster offers', (t) => {
  t.like(run({ kvCacheUsageMax: 0.95 }).find((r) => r.id === 'larger-gpu'), { change: { gpu: 'nvidia-a100-80gb' } });
  const noA100 = [{ gpu: 'nvidia-a100-80gb', fits: true, available: false, gpusPerReplica: 1, hourlyCents: 280 }];
  t.not(run({ kvCacheUsageMax: 0.95 }, {}, {}, noA100).find((r) => r.id === 'larger-gpu')?.change.gpu, 'nvidia-a100-80gb');
});

test('auto-apply takes only cost-saving capacity cuts, in precedence order, and none while p95 time to first token is above the target', (t) => {
  const idle = { requestsPerSecond: 0, requestsRunningMax: 0, requestsRunningAvg: 0, kvCacheUsageMax: 0, kvCacheUsageAvg: 0, p95TimeToFirstTokenSeconds: null };
  const targets = { ...noTargets, targetP95TimeToFirstTokenMs: 500 };
  t.is(autoApplicable(run(idle, {}, targets), { ...quiet, ...idle }, targets)?.id, (MIN_REPLICAS as number) === 0 ? 'scale-to-zero' : 'fewer-replicas');
  const underused = { kvCacheUsageMax: 0.2 };
  t.like(autoApplicable(run(underused, { replicas: 4, maxReplicas: 4 }, targets), { ...quiet, ...underused }, targets), { id: 'fewer-replicas', change: { replicas: 2 } });
  // Above the target: nothing, even were a cut listed.
  const slow = { ...underused, p95TimeToFirstTokenSeconds: 0.8 };
  const cut = run(underused, { replicas: 4, maxReplicas: 4 }, targets);
  t.is(autoApplicable(cut, { ...quiet, ...slow }, targets), undefined);
  // More replicas, a larger GPU, a shorter context or a cheaper GPU wait for a person.
  const queue = { requestsWaitingAvg: 6, requestsWaitingMax: 12, requestsRunningAvg: 12, kvCacheUsageMax: 0.95 };
  const others = run(queue, {}, noTargets, [{ gpu: 'nvidia-t4', fits: true, available: true, gpusPerReplica: 2, hourlyCents: 100 }]);
  t.true(others.length > 0);
  t.is(autoApplicable(others, { ...quiet, ...queue }, noTargets), undefined);
});
