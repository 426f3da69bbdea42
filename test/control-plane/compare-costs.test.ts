// POST /v1/providers/compare-costs over HTTP: a catalog model sized on every offer of the shipped price table
// (catalog/provider-prices.ts) and on Kiln's GPU types, with its source; a GPU requirement; the cost per
// million tokens from the throughput the organization's own deployment of the model had (a Prometheus stand-in
// answers it), and only the hourly price where none was measured; input rules, credentials and scopes.
import test from 'ava';
import { PROVIDER_PRICES } from '../../catalog/provider-prices.ts';
import { addMember, createApiKey, signup, signupWithDeployment, startTestApi, type TestApi } from '../support/control-plane.ts';
import { startPrometheusStandIn, type PrometheusStandIn } from '../support/prometheus-standin.ts';

const PATH = '/v1/providers/compare-costs';
const LLAMA = 'meta-llama/Llama-3.1-8B-Instruct';

let api: TestApi;
let prometheus: PrometheusStandIn;
test.before(async () => {
  // The deployment named llama-chat generated 300 tokens/s over the hour on 2 ready replicas on average.
  prometheus = await startPrometheusStandIn((query) => {
    if (query.includes('vllm:generation_tokens_total')) return [{ deployment: 'llama-chat', value: 300 }];
    if (query.includes('up{')) return [{ deployment: 'llama-chat', value: 2 }];
    return [];
  });
  api = await startTestApi(import.meta.filename, { config: { prometheusUrl: prometheus.url } });
});
test.after.always(async () => {
  await api?.close();
  await prometheus?.close();
});

type Offer = { provider: string; instanceType: string; fits: boolean; hourlyCents: number; perMillionTokensCents: number | null; [key: string]: unknown };
const offer = (body: { offers: Offer[] }, provider: string, instanceType: string) => body.offers.find((o) => o.provider === provider && o.instanceType === instanceType)!;

test.serial('a model on every offer: sized by the fit rules, priced from the table with its source, fitting offers first and cheapest first', async (t) => {
  const { token } = await signup(api);
  const res = await api.request('POST', PATH, { token, body: { model: LLAMA } });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body.requirement, { model: LLAMA, contextLength: 4096, gpuMemoryGb: null, gpuCount: null });
  t.is(res.body.offers.length, PROVIDER_PRICES.length + 5);
  const g6 = offer(res.body, 'aws', 'g6.2xlarge');
  t.like(g6, {
    region: 'us-east-1', gpu: { name: 'L4', memoryGb: 22.35, count: 1 }, kilnGpu: 'nvidia-l4', fits: true, replicasPerInstance: 1, hourlyUsd: 0.9776, hourlyCents: 97.76,
    perMillionTokensCents: null, throughput: null,
    source: { repository: 'skypilot-org/skypilot-catalog', path: 'catalogs/v8/aws/vms.csv', commit: '00148f2af3672e2229b4f7bf8157d5a3f36e3c35', retrievedOn: '2026-11-24' },
  });
  t.regex(g6.throughputNote as string, /^none measured: no deployment of the organization served .* in the last hour; only the hourly price is known$/);
  t.like(offer(res.body, 'aws', 'g6.24xlarge'), { fits: true, replicasPerInstance: 4, hourlyCents: 667.52 });
  // Kiln's own GPU types, by the catalog's price rule: a T4 needs 2 GPUs for the 16 GB of weights.
  t.like(offer(res.body, 'kiln', 'nvidia-t4'), { fits: true, gpu: { count: 2 }, replicasPerInstance: 1, hourlyCents: 106, source: { path: 'catalog/gpu-types.ts', commit: null } });
  t.like(offer(res.body, 'kiln', 'nvidia-l4'), { fits: true, hourlyCents: 80 });
  const fitting = res.body.offers.filter((o: Offer) => o.fits).map((o: Offer) => o.hourlyCents);
  t.deepEqual(fitting, [...fitting].sort((a, b) => a - b));
});

test.serial('a GPU requirement: offers with that many GPUs of at least that memory; only the hourly price is known', async (t) => {
  const { token } = await signup(api);
  const res = await api.request('POST', PATH, { token, body: { gpuMemoryGb: 40, gpuCount: 2 } });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body.requirement, { model: null, contextLength: null, gpuMemoryGb: 40, gpuCount: 2 });
  t.like(offer(res.body, 'lambda', 'gpu_2x_a100'), { fits: true, hourlyCents: 398, perMillionTokensCents: null, throughputNote: 'no model given: only the hourly price is known' });
  t.like(offer(res.body, 'lambda', 'gpu_1x_a100'), { fits: false, reason: '1 GPU(s), fewer than 2' });
  t.like(offer(res.body, 'aws', 'g6.24xlarge'), { fits: false, reason: '22.35 GB a GPU is less than 40 GB' });
  t.like(offer(res.body, 'kiln', 'nvidia-a100-80gb'), { fits: true, gpu: { count: 2 }, hourlyCents: 560 });
  t.deepEqual(res.body.offers.filter((o: Offer) => o.fits).map((o: Offer) => o.instanceType),
    ['2x_A100-80GB_SECURE', 'gpu_2x_a100', 'nvidia-a100-80gb', 'gpu_2x_h100_sxm5', 'nvidia-h100-80gb', 'gpu_8x_h100_sxm5']);
});

test.serial('per million tokens: from the generation rate per replica the organization\'s deployment of the model had on that GPU type; another organization\'s is not used', async (t) => {
  const owner = await signupWithDeployment(api);
  const res = await api.request('POST', PATH, { token: owner.token, body: { model: LLAMA } });
  t.is(res.status, 200, JSON.stringify(res.body));
  // 300 tokens/s on 2 replicas: 150 a replica, 540,000 an hour.
  const throughput = { generationTokensPerSecondPerReplica: 150, deploymentId: owner.id, windowSeconds: 3600 };
  t.like(offer(res.body, 'kiln', 'nvidia-l4'), { perMillionTokensCents: 148.15, throughput });
  t.like(offer(res.body, 'aws', 'g6.2xlarge'), { perMillionTokensCents: 181.04, throughput });
  // Four replicas on one g6.24xlarge.
  t.like(offer(res.body, 'aws', 'g6.24xlarge'), { perMillionTokensCents: 309.04 });
  t.like(offer(res.body, 'lambda', 'gpu_1x_h100_sxm5'), { perMillionTokensCents: null, throughput: null });
  t.regex(offer(res.body, 'kiln', 'nvidia-l4').throughputNote as string, new RegExp(`^measured: deployment ${owner.id} of this model on NVIDIA L4 24GB`));

  const other = await signup(api);
  const theirs = await api.request('POST', PATH, { token: other.token, body: { model: LLAMA } });
  t.like(offer(theirs.body, 'kiln', 'nvidia-l4'), { perMillionTokensCents: null, throughput: null });

  prometheus.down = true;
  try {
    const away = await api.request('POST', PATH, { token: owner.token, body: { model: LLAMA } });
    t.is(away.status, 200, 'the hourly prices do not need Prometheus');
    t.like(offer(away.body, 'kiln', 'nvidia-l4'), { perMillionTokensCents: null, throughputNote: 'the metrics store (Prometheus) could not be read' });
  } finally {
    prometheus.down = false;
  }
});

test.serial('input: a model or a GPU requirement, not both nor neither (422 naming the field); wrong types and a count outside 1, 2, 4, 8 are 400', async (t) => {
  const { token } = await signup(api);
  const field = async (body: unknown) => {
    const res = await api.request('POST', PATH, { token, body });
    return [res.status, /^Invalid field (\w+):/.exec(res.body.message)?.[1]];
  };
  t.deepEqual(await field({}), [422, 'model']);
  t.deepEqual(await field({ model: LLAMA, gpuMemoryGb: 24 }), [422, 'gpuMemoryGb']);
  t.deepEqual(await field({ gpuMemoryGb: 24, contextLength: 4096 }), [422, 'contextLength']);
  t.deepEqual(await field({ model: LLAMA, gpuCount: 2 }), [422, 'gpuCount']);
  t.deepEqual(await field({ model: LLAMA, contextLength: 200_000 }), [422, 'contextLength']);
  t.deepEqual(await field({ model: 's3://bucket/weights' }), [422, 'model'], 'no figures for a storage location');
  t.deepEqual(await field({ gpuMemoryGb: -1 }), [422, 'gpuMemoryGb']);
  t.is((await api.request('POST', PATH, { token, body: { gpuMemoryGb: 24, gpuCount: 3 } })).status, 400, 'not one of the literal counts');
  t.is((await api.request('POST', PATH, { token, body: { gpuMemoryGb: '24' } })).status, 400);
  t.is((await api.request('POST', PATH, { token, body: { model: 7 } })).status, 400);
  t.is((await api.request('POST', PATH, { token, body: { model: LLAMA, provider: 'aws' } })).status, 400, 'unknown field');
  t.is((await api.request('POST', PATH, { token, body: 'not json{' })).status, 400);
});

test.serial('credentials: 401 without one; a role without catalog reads is 403; a read-only key may compare (it changes nothing)', async (t) => {
  const owner = await signup(api);
  t.is((await api.request('POST', PATH, { body: { gpuMemoryGb: 24 } })).status, 401);
  const role = await api.request('POST', '/v1/enterprise/roles', { token: owner.token, body: { name: 'Auditor', permissions: ['audit:read'] } });
  t.is(role.status, 201, JSON.stringify(role.body));
  const auditor = await addMember(api, owner.organizationId, role.body.id);
  t.is((await api.request('POST', PATH, { ...auditor.as, body: { gpuMemoryGb: 24 } })).status, 403);
  const key = await createApiKey(api, owner.token, 'read_only');
  t.is((await api.request('POST', PATH, { token: key.key, body: { gpuMemoryGb: 24 } })).status, 200);
});
